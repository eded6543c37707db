package connect

import (
	"errors"
	"slices"
)

// State is what a client's file says about evokore.
type State struct {
	Client Client
	File   string
	// Found is whether the file exists; Err why it could not be read.
	Found bool
	Err   error
	// Connected is whether it has an evokore entry; Command and Args are
	// what the entry runs, Config the --config it names.
	Connected bool
	Command   string
	Args      []string
	Config    string
	// Others are the client's other servers.
	Others []string
}

// Inspect reads a client's file.
func Inspect(c Client, file string) State {
	s := State{Client: c, File: file}
	data, found, err := readFile(file)
	s.Found = found
	if err != nil || !found {
		s.Err = err
		return s
	}
	f, err := openServerFile(c, data)
	if err != nil {
		s.Err = errors.New(located(file, data, err))
		return s
	}
	for _, n := range f.names() {
		if n != Name {
			s.Others = append(s.Others, n)
			continue
		}
		s.Connected = true
		s.Command, s.Args = f.command(n)
		if i := slices.Index(s.Args, "--config"); i >= 0 && i+1 < len(s.Args) {
			s.Config = s.Args[i+1]
		}
	}
	return s
}
