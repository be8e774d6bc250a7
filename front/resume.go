package front

import (
	"encoding/json"
	"os"
	"time"
)

// ResumeEnv is the variable through which the front gives the full
// program the Resume of a call it began. The full program takes it out of
// its environment before anything else reads it.
const ResumeEnv = "QUEUECTL_FRONT_RESUME"

// Resume is a call the front began: its job was handed to the worker, with
// the id ID, at Start. The full program stores the job itself only when
// the worker did not (a job with this id and command made since Start is
// this call's), and, for run, writes only what the front did not: runs
// whose start (Started) or end (Ended) it told, and bytes of each run's
// stdout (stream 0) and stderr (1) it wrote (Wrote: attempt, stream,
// bytes), whether it left a line of the job's output open where its
// notices go (Open), and whether it said why the job waits (Said), after
// which a start is told.
type Resume struct {
	ID      string
	Start   time.Time
	Started []int      `json:",omitempty"`
	Ended   []int      `json:",omitempty"`
	Wrote   [][3]int64 `json:",omitempty"`
	Open    bool       `json:",omitempty"`
	Said    bool       `json:",omitempty"`
}

func (r *Resume) env() string {
	data, _ := json.Marshal(r) // a struct of plain fields: no error
	return ResumeEnv + "=" + string(data)
}

// TakeResume returns the Resume the front left in the environment, if
// any, and removes it from the environment.
func TakeResume() (Resume, bool) {
	v, ok := os.LookupEnv(ResumeEnv)
	if !ok {
		return Resume{}, false
	}
	os.Unsetenv(ResumeEnv)
	var r Resume
	if err := json.Unmarshal([]byte(v), &r); err != nil || r.ID == "" {
		return Resume{}, false
	}
	return r, true
}
