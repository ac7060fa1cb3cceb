package main

/*
#include <stdint.h>
*/
import "C"

import "github.com/toolselect/toolselect/cabi/internal/capi"

//export toolselect_eval_select
func toolselect_eval_select(reg C.uint64_t, requestJSON *C.char, cancel C.uint64_t, out **C.char) (rc C.int) {
	defer guard(&rc, out)
	b, ok := in(requestJSON)
	return emit(capi.EvalSelect(uint64(reg), b, ok, uint64(cancel)), out)
}
