package cluster

import "sort"

// SortedKeys are m's keys in order, for output that does not change from
// run to run.
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
