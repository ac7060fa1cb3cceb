package capi

// Placeholder until selector/ lands.

func SelectorNew(cfg []byte, present bool) Result { return Fail(ErrInternal, "not implemented") }
func SelectorSelect(sel, reg uint64, req []byte, present bool, cancel uint64) Result {
	return Fail(ErrInternal, "not implemented")
}
func SelectorClose(h uint64) Result { return table.remove(h, KindSelector) }
func SessionBegin(sel, reg uint64, req []byte, present bool) Result {
	return Fail(ErrInternal, "not implemented")
}
func SessionFeed(h uint64, reply []byte, present bool) Result {
	if _, r := table.get(h, KindSession); r != nil {
		return *r
	}
	return Fail(ErrInternal, "not implemented")
}
func SessionClose(h uint64) Result { return table.remove(h, KindSession) }
func CancelNew() Result            { return Fail(ErrInternal, "not implemented") }
func Cancel(h uint64) Result       { return Fail(ErrInternal, "not implemented") }
func CancelClose(h uint64) Result  { return table.remove(h, KindCancel) }
