package patch

// MergePatch applies a JSON merge patch (RFC 7386) to doc and returns the
// result; doc is not changed. A null in the patch removes the member; an
// object merges recursively; anything else replaces the target.
func MergePatch(doc, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return deepCopy(patch)
	}
	target, ok := doc.(map[string]any)
	if !ok {
		target = map[string]any{}
	}
	out := cloneMap(target)
	for k, v := range p {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = MergePatch(out[k], v)
	}
	return out
}
