package feedbackstore

import (
	"reflect"
	"testing"
)

var recordSeeds = []string{
	`{"query":"weather in Paris","tools":["get_weather"]}`,
	` { "query" : "a" , "tools" : [ "x" , "y" ] , "remove" : true } `,
	`{"tools":["x"],"query":"b","remove":false}`,
	`{"query":"caf\u00e9","tools":["x"]}`,
	`{"Query":"a","tools":["x"]}`,
	`{"query":"a","query":"b","tools":["x"]}`,
	`{"query":"a","tools":["x"],"other":1}`,
	`{"query":"a","tools":["x"]} {}`,
	`{"query":"a","tools":[]}`,
	`{"query":"a","tools":null}`,
	`{"query":"日本語","tools":["x"]}`,
	"{\"query\":\"\xff\",\"tools\":[\"x\"]}",
	`{"query":"a","tools":["x"],"remove":tru}`,
	`{}`,
	`[]`,
	`{"query":"a \"b\" \\ \/ \b\f\n\r\t \u003c\u00E9","tools":["x\u0026y"]}`,
	`{"query":"\ud83d\ude00","tools":["x"]}`,
	`{"\u0071uery":"a","tools":["x"]}`,
	`{"query":"a\x","tools":["x"]}`,
	`{"query":"a\u12","tools":["x"]}`,
}

// Every line the fast path accepts, encoding/json reads as the same record.
func FuzzParsePlainAgreesWithJSON(f *testing.F) {
	for _, s := range recordSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkPlainAgrees(t, b)
	})
}

func TestParsePlainAgreesWithJSON(t *testing.T) {
	accepted := 0
	for _, s := range recordSeeds {
		if checkPlainAgrees(t, []byte(s)) {
			accepted++
		}
	}
	if accepted < 4 {
		t.Errorf("the fast path accepted only %d of the plain seeds", accepted)
	}
	// A line of the shape the library writes takes the fast path.
	if _, ok := parsePlain([]byte(`{"query":"book a table for two","tools":["book_restaurant","get_directions"]}`)); !ok {
		t.Error("a plain record missed the fast path")
	}
}

func checkPlainAgrees(t *testing.T, b []byte) bool {
	t.Helper()
	got, ok := parsePlain(b)
	if !ok {
		return false
	}
	want, err := decodeRecord(b)
	if err != nil {
		t.Fatalf("fast path accepted %q, encoding/json refused it: %v", b, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: fast path %+v, encoding/json %+v", b, got, want)
	}
	return true
}
