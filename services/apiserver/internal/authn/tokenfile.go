package authn

import (
	"context"
	"crypto/subtle"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"strings"

	"podline.dev/services/apiserver/internal/request"
)

// StaticTokens authenticates fixed bearer tokens, such as a bootstrap token
// for joining a node. The file format is kube-apiserver's
// --token-auth-file: CSV lines of token,user,uid[,"group1,group2"].
type StaticTokens struct {
	tokens map[string]*request.User
}

var _ Authenticator = (*StaticTokens)(nil)

// NewStaticTokens authenticates the tokens of m.
func NewStaticTokens(m map[string]*request.User) *StaticTokens { return &StaticTokens{tokens: m} }

// LoadTokenFile reads a --token-auth-file.
func LoadTokenFile(path string) (*StaticTokens, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseTokenFile(f)
}

// ParseTokenFile parses the CSV form; lines starting with # are comments.
func ParseTokenFile(r io.Reader) (*StaticTokens, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.Comment = '#'
	cr.TrimLeadingSpace = true
	m := map[string]*request.User{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return NewStaticTokens(m), nil
		}
		if err != nil {
			return nil, err
		}
		line, _ := cr.FieldPos(0)
		if len(rec) < 3 || rec[0] == "" || rec[1] == "" {
			return nil, fmt.Errorf("token file line %d: want token,user,uid[,groups]", line)
		}
		if _, dup := m[rec[0]]; dup {
			return nil, fmt.Errorf("token file line %d: duplicate token", line)
		}
		u := &request.User{Name: rec[1], UID: rec[2]}
		if len(rec) > 3 && rec[3] != "" {
			for _, g := range strings.Split(rec[3], ",") {
				u.Groups = append(u.Groups, strings.TrimSpace(g))
			}
		}
		m[rec[0]] = u
	}
}

// Authenticate looks the token up; a token not in the file is not an
// error here (a later authenticator may know it).
func (s *StaticTokens) Authenticate(_ context.Context, c Credentials) (*request.User, bool, error) {
	if c.BearerToken == "" {
		return nil, false, nil
	}
	for tok, u := range s.tokens {
		if subtle.ConstantTimeCompare([]byte(tok), []byte(c.BearerToken)) == 1 {
			return u, true, nil
		}
	}
	return nil, false, nil
}
