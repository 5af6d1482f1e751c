package framework

import (
	"errors"
	"strings"
)

// Code is a plugin's verdict.
type Code int

// The codes of Kubernetes' framework.
const (
	// Success: the plugin ran and the pod may go on.
	Success Code = iota
	// Error: something went wrong inside the plugin or the cluster state;
	// the pod is retried after a backoff.
	Error
	// Unschedulable: the pod does not fit now, but preemption or a cluster
	// change may help.
	Unschedulable
	// UnschedulableAndUnresolvable: the pod does not fit and preemption
	// cannot help on this node.
	UnschedulableAndUnresolvable
	// Wait: a Permit plugin holds the pod until it is allowed or rejected.
	Wait
	// Skip: the plugin has nothing to do for this pod at this extension
	// point (PreFilter, PreScore), so its later points are skipped too.
	Skip
	// Pending: the pod waits for something outside the scheduler (PreEnqueue).
	Pending
)

var codeNames = []string{"Success", "Error", "Unschedulable", "UnschedulableAndUnresolvable", "Wait", "Skip", "Pending"}

func (c Code) String() string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "Unknown"
}

// Status is the result of running a plugin. A nil *Status is Success.
type Status struct {
	code    Code
	reasons []string
	err     error
	plugin  string
}

// NewStatus returns a status with the given code and reasons.
func NewStatus(code Code, reasons ...string) *Status {
	s := &Status{code: code, reasons: reasons}
	if code == Error && len(reasons) > 0 {
		s.err = errors.New(s.Message())
	}
	return s
}

// AsStatus wraps err as an Error status (nil stays nil).
func AsStatus(err error) *Status {
	if err == nil {
		return nil
	}
	return &Status{code: Error, reasons: []string{err.Error()}, err: err}
}

// Code is the status's code; nil is Success.
func (s *Status) Code() Code {
	if s == nil {
		return Success
	}
	return s.code
}

// Reasons are the human-readable reasons, e.g. "Insufficient cpu".
func (s *Status) Reasons() []string {
	if s == nil {
		return nil
	}
	if s.err != nil && len(s.reasons) == 0 {
		return []string{s.err.Error()}
	}
	return s.reasons
}

// Message joins the reasons with ", ".
func (s *Status) Message() string {
	if s == nil {
		return ""
	}
	return strings.Join(s.Reasons(), ", ")
}

// Plugin names the plugin that returned the status (set by the framework).
func (s *Status) Plugin() string {
	if s == nil {
		return ""
	}
	return s.plugin
}

// WithPlugin sets the plugin's name and returns s. A status that already
// names the plugin is not written to, so plugins may return one shared,
// prebuilt status (NewStatus(...).WithPlugin(Name)) from parallel Filter calls.
func (s *Status) WithPlugin(name string) *Status {
	if s != nil && s.plugin != name {
		s.plugin = name
	}
	return s
}

// AsError is the status as an error (nil for Success, Skip).
func (s *Status) AsError() error {
	if s.IsSuccess() || s.IsSkip() {
		return nil
	}
	if s.err != nil {
		return s.err
	}
	return errors.New(s.Message())
}

// IsSuccess is true for a nil status or code Success.
func (s *Status) IsSuccess() bool { return s.Code() == Success }

// IsSkip is true for code Skip.
func (s *Status) IsSkip() bool { return s.Code() == Skip }

// IsWait is true for code Wait.
func (s *Status) IsWait() bool { return s.Code() == Wait }

// IsRejected is true for the codes that mean "does not fit": Unschedulable,
// UnschedulableAndUnresolvable and Pending.
func (s *Status) IsRejected() bool {
	c := s.Code()
	return c == Unschedulable || c == UnschedulableAndUnresolvable || c == Pending
}

// Equal compares code and reasons (for tests; Plugin is checked apart).
func (s *Status) Equal(o *Status) bool {
	if s == nil || o == nil {
		return s.IsSuccess() && o.IsSuccess()
	}
	if s.code != o.code || len(s.reasons) != len(o.reasons) {
		return false
	}
	for i := range s.reasons {
		if s.reasons[i] != o.reasons[i] {
			return false
		}
	}
	return true
}

func (s *Status) String() string {
	if s == nil {
		return "Success"
	}
	out := s.code.String()
	if m := s.Message(); m != "" {
		out += ": " + m
	}
	if s.plugin != "" {
		out += " (" + s.plugin + ")"
	}
	return out
}
