// Package policy decides what a call may do: RBAC levels from the compiled
// permission matrix and the user's permissions.yml.
//
// It must not dispatch calls or know about transports.
package policy
