package diskqueue

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
)

// The checkpoints of catch-up are kept in one small file, replaced whole
// at each change: a CRC-32C, then the checkpoints as JSON.
const checkpointFile = "checkpoints"

// Checkpoint implements webhook.Queue.
func (q *Queue) Checkpoint(_ context.Context, name string) ([]byte, error) {
	q.cpMu.Lock()
	defer q.cpMu.Unlock()
	return bytes.Clone(q.checkpoints[name]), nil
}

// SetCheckpoint implements webhook.Queue.
func (q *Queue) SetCheckpoint(_ context.Context, name string, value []byte) error {
	q.cpMu.Lock()
	defer q.cpMu.Unlock()
	next := maps.Clone(q.checkpoints)
	if next == nil { // a file that held null
		next = map[string][]byte{}
	}
	next[name] = bytes.Clone(value)
	if err := q.saveCheckpoints(next); err != nil {
		return fmt.Errorf("diskqueue: storing checkpoint %q: %w", name, err)
	}
	q.checkpoints = next
	return nil
}

// saveCheckpoints replaces the checkpoint file, durably.
func (q *Queue) saveCheckpoints(cps map[string][]byte) error {
	js, err := json.Marshal(cps)
	if err != nil {
		return err
	}
	path := filepath.Join(q.dir, checkpointFile)
	data := binary.LittleEndian.AppendUint32(nil, checksum(js))
	return q.replaceFile(path, append(data, js...))
}

// loadCheckpoints reads the checkpoint file. A damaged one is counted,
// logged and read as empty: catch-up then starts over, which repeats
// nothing a queue's dedup keys do not catch.
func (q *Queue) loadCheckpoints() error {
	data, err := q.disk.ReadFile(filepath.Join(q.dir, checkpointFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("diskqueue: reading checkpoints: %w", err)
	}
	if len(data) < 4 || binary.LittleEndian.Uint32(data) != checksum(data[4:]) || json.Unmarshal(data[4:], &q.checkpoints) != nil {
		q.damaged.Add(1)
		q.checkpoints = map[string][]byte{}
		q.log(slog.LevelError, "diskqueue: damaged checkpoints ignored; catch-up starts over")
	}
	return nil
}
