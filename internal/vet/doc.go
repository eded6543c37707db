// Package vet checks a user's configuration the way CI needs it: every
// file through its schema, then the checks that span files (profiles and
// permissions against the native table and the configured servers, roles,
// placeholders), each problem positioned at file:line:col.
//
// It reads files and reports; it never starts children or changes state.
package vet
