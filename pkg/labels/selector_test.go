package labels

import (
	"errors"
	"strings"
	"testing"
)

func TestParseSelectsWhatKubernetesSelects(t *testing.T) {
	web := Set{"app": "web", "tier": "frontend", "env": "prod"}
	db := Set{"app": "db", "tier": "backend", "replicas": "3"}
	none := Set{}
	tests := []struct {
		selector string
		matches  []Set
		misses   []Set
	}{
		{"", []Set{web, db, none}, nil},
		{"app=web", []Set{web}, []Set{db, none}},
		{"app==web", []Set{web}, []Set{db, none}},
		{"app!=web", []Set{db, none}, []Set{web}}, // an absent key satisfies !=
		{"app in (web,db)", []Set{web, db}, []Set{none}},
		{"app notin (web)", []Set{db, none}, []Set{web}}, // and notin
		{"env", []Set{web}, []Set{db, none}},
		{"!env", []Set{db, none}, []Set{web}},
		{"app=web,tier=frontend", []Set{web}, []Set{db}},
		{"app=web,tier=backend", nil, []Set{web, db}},
		{"  app = web , env  ", []Set{web}, []Set{db}},
		{"replicas>2", []Set{db}, []Set{web, none}},
		{"replicas<2", nil, []Set{db, web}},
		{"env=", nil, []Set{web, none}},           // empty value: key present and empty
		{"env in (prod,)", []Set{web}, []Set{db}}, // an empty value in a list
		{"in=x", nil, []Set{web}},                 // "in" is an ordinary key where a key is expected
		{"example.com/owner=team-a", []Set{{"example.com/owner": "team-a"}}, []Set{web}},
	}
	for _, tt := range tests {
		t.Run(tt.selector, func(t *testing.T) {
			s, err := Parse(tt.selector)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			for _, l := range tt.matches {
				if !s.Matches(l) {
					t.Errorf("%q does not match %v", tt.selector, l)
				}
			}
			for _, l := range tt.misses {
				if s.Matches(l) {
					t.Errorf("%q matches %v", tt.selector, l)
				}
			}
		})
	}
}

func TestSelectorStringIsCanonicalAndParsesBack(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"tier=db,app=web", "app=web,tier=db"},
		{"app==web", "app=web"},
		{"env in (staging, prod, prod)", "env in (prod,staging)"},
		{"!canary,release", "!canary,release"},
		{"b notin (y,x),a!=1", "a!=1,b notin (x,y)"},
		{"n>5", "n>5"},
	}
	for _, tt := range tests {
		s, err := Parse(tt.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.in, err)
		}
		if got := s.String(); got != tt.want {
			t.Errorf("Parse(%q).String() = %q, want %q", tt.in, got, tt.want)
		}
		again, err := Parse(s.String())
		if err != nil || again.String() != s.String() {
			t.Errorf("%q does not parse back: %v, %v", s.String(), again, err)
		}
	}
}

func TestParseErrorsSayWhatWasExpectedWhere(t *testing.T) {
	tests := []struct {
		selector string
		pos      int
		message  string
	}{
		{"app in (web", 11, "expected ',' or ')' in the \"in\" list, found end of selector"},
		{"app in web", 7, "expected '(' after \"in\", found \"web\""},
		{"app in ()", 8, "expected at least one value in the \"in\" list"},
		{"app=web,", 8, "expected a requirement after ','"},
		{"app=web tier=db", 8, "expected ',' or end of selector after requirement \"app=web\", found \"tier\""},
		{"app=(web)", 4, "expected a value after '=', found '('"},
		{"app~web", 0, "invalid label key \"app~web\": " + nameCharsMsg},
		{"-app=web", 0, "invalid label key \"-app\": " + nameCharsMsg},
		{"app=-web", 0, "invalid label value \"-web\" for key \"app\": " + valueMsg},
		{"a/b/c", 0, "invalid label key \"a/b/c\": a qualified name must have at most one '/' (an optional prefix, then a name)"},
		{"Example.com/x", 0, "invalid label key \"Example.com/x\": " + prefixMsg},
		{"n>x", 0, "operator \"gt\" for key \"n\" needs an integer value, got \"x\""},
		{"!", 1, "expected a label key after '!', found end of selector"},
		{"app!web", 3, "expected an operator (=, ==, !=, in, notin, >, <), ',' or end of selector after key \"app\", found '!'"},
		{"," + strings.Repeat("a", 3), 0, "expected a label key or '!', found ','"},
		{"app=" + strings.Repeat("v", 64), 0, "invalid label value \"" + strings.Repeat("v", 64) + "\" for key \"app\": must be no more than 63 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.selector, func(t *testing.T) {
			_, err := Parse(tt.selector)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a *ParseError", err)
			}
			if !errors.Is(err, ErrInvalidSelector) {
				t.Error("error does not wrap ErrInvalidSelector")
			}
			if pe.Message != tt.message || pe.Position != tt.pos {
				t.Errorf("got %q at %d\nwant %q at %d", pe.Message, pe.Position, tt.message, tt.pos)
			}
			if !strings.HasPrefix(err.Error(), "unable to parse label selector \""+tt.selector+"\": ") {
				t.Errorf("message does not quote the selector: %s", err)
			}
		})
	}
}

func TestSelectorFromSetSelectsSupersets(t *testing.T) {
	s := SelectorFromSet(map[string]string{"app": "web", "tier": "frontend"})
	if s.String() != "app=web,tier=frontend" {
		t.Errorf("String() = %q", s.String())
	}
	if !s.Matches(map[string]string{"app": "web", "tier": "frontend", "pod-template-hash": "abc"}) {
		t.Error("does not match a superset")
	}
	if s.Matches(Set{"app": "web"}) {
		t.Error("matches a subset")
	}
	if !SelectorFromSet(nil).Empty() || !SelectorFromSet(nil).Matches(Set{"x": "y"}) {
		t.Error("an empty set does not select everything")
	}
}

func TestNothingSelectsNothingAndCannotBeSentAsEverything(t *testing.T) {
	if Nothing().Matches(Set{}) || Nothing().Empty() {
		t.Fatal("Nothing selects something")
	}
	if _, err := Parse(Nothing().String()); err == nil {
		t.Fatal("Nothing's string parses")
	}
}

func TestNewRequirementChecksValuesForTheOperator(t *testing.T) {
	tests := []struct {
		op     Operator
		values []string
		ok     bool
	}{
		{Equals, []string{"a"}, true},
		{Equals, nil, false},
		{Equals, []string{"a", "b"}, false},
		{In, []string{"a", "b"}, true},
		{NotIn, nil, false},
		{Exists, nil, true},
		{DoesNotExist, []string{"a"}, false},
		{GreaterThan, []string{"10"}, true},
		{LessThan, []string{"ten"}, false},
		{Operator("like"), []string{"a"}, false},
	}
	for _, tt := range tests {
		_, err := NewRequirement("k", tt.op, tt.values)
		if (err == nil) != tt.ok {
			t.Errorf("NewRequirement(k, %q, %v): err = %v, want ok=%v", tt.op, tt.values, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidSelector) {
			t.Errorf("%v does not wrap ErrInvalidSelector", err)
		}
	}
}

func TestValidateKey(t *testing.T) {
	good := []string{"app", "app.kubernetes.io/name", "a", "A_b-c.d", strings.Repeat("x", 63), "k8s.io/" + strings.Repeat("x", 63)}
	bad := []string{"", "/app", "app/", "-app", "app-", "a b", strings.Repeat("x", 64), "UPPER.io/x", "a..b.io/x"}
	for _, k := range good {
		if errs := ValidateKey(k); len(errs) > 0 {
			t.Errorf("ValidateKey(%q) = %v", k, errs)
		}
	}
	for _, k := range bad {
		if errs := ValidateKey(k); len(errs) == 0 {
			t.Errorf("ValidateKey(%q) accepted it", k)
		}
	}
}
