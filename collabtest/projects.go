package collabtest

import "time"

type project struct {
	id                                                 int
	name, path, description, defaultBranch             string
	visibility                                         int // 0, 10 or 20
	ownerID                                            int // 0 for group projects
	groupID                                            int // 0 for personal projects
	creatorID                                          int
	createdAt, lastActivityAt                          time.Time
	issuesEnabled, mergeRequestsEnabled, buildsEnabled bool
	wikiEnabled, snippetsEnabled, containerRegistry    bool
	publicBuilds, sharedRunnersEnabled, archived       bool
	tagList                                            []string
	importURL                                          string
	members                                            map[int]int // user id -> access level
	starredBy                                          map[int]bool
	sharedWith                                         map[int]int // group id -> access level
	forkedFromID                                       int
	branches                                           map[string]*branch
	runnersToken                                       string
}

func (s *Server) projectRoutes() {}
