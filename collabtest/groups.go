package collabtest

import "time"

type group struct {
	id                      int
	name, path, description string
	visibility              int
	avatarURL               string
	members                 map[int]int // user id -> access level
	createdAt               time.Time
}

func (s *Server) groupRoutes() {}
