// Package filter applies the filters of ListPodSandbox, ListContainers and
// their stats calls to the runtime's listed objects: an ID (a unique
// prefix is enough, as crictl shortens IDs), a state, a sandbox ID and a
// label selector that every given label must equal. Pure functions of the
// list and the filter.
package filter
