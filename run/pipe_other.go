//go:build !linux

package run

import "os"

func jobPipe() (r, w *os.File, err error) { return os.Pipe() }

func gatePipe() (r, w *os.File, err error) { return os.Pipe() }
