package collabtest

import "time"

type build struct {
	id, projectID                    int
	name, stage, ref                 string
	tag                              bool
	status                           string // pending, running, failed, success, canceled, skipped
	coverage                         *float64
	createdAt, startedAt, finishedAt time.Time
	runnerID                         int
	userID                           int
	commitID, commitMessage          string
	beforeSHA                        string
	commands                         string // lines joined by "\n"
	variables                        []buildVariable
	artifacts                        []byte
	artifactsName                    string
	artifactsExpireAt                time.Time
	trace                            []byte
	erased                           bool
}

type buildVariable struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Public bool   `json:"public"`
}

func (s *Server) buildRoutes() {}
