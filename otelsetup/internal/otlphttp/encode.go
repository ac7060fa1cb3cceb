package otlphttp

import (
	"math"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/protobuf/encoding/protowire"
)

// The encoders below write the OTLP protobuf messages
// (opentelemetry-proto, stable since OTLP 1.0) field by field with
// protowire. Field numbers are the .proto files'; encode_test.go decodes
// the bodies the SDK's own OTLP exporters send for the same data and this
// package's with the generated types of go.opentelemetry.io/proto/otlp, and
// requires equal messages, so a wrong number, wire type or omitted field
// fails there. A scalar equal to its proto3 default is left out, as the
// generated marshaller does.

// msg appends field num holding the message that body writes, and nothing
// when body writes nothing and keepEmpty is false.
func msg(b []byte, num protowire.Number, keepEmpty bool, body func([]byte) []byte) []byte {
	inner := body(nil)
	if len(inner) == 0 && !keepEmpty {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, inner)
}

func str(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func byts(b []byte, num protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func varint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func fixed64(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, v)
}

func fixed32(b []byte, num protowire.Number, v uint32) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, v)
}

func double(b []byte, num protowire.Number, v float64) []byte {
	return fixed64(b, num, math.Float64bits(v))
}

// optDouble writes an optional double (present even when 0).
func optDouble(b []byte, num protowire.Number, v float64) []byte {
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, math.Float64bits(v))
}

func unixNano(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixNano())
}

// anyValue writes the fields of an AnyValue (common.proto). A value of no
// type (attribute.EMPTY) is an AnyValue with no field set.
func anyValue(b []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.BOOL:
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		return protowire.AppendVarint(b, protowire.EncodeBool(v.AsBool()))
	case attribute.INT64:
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		return protowire.AppendVarint(b, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		b = protowire.AppendTag(b, 4, protowire.Fixed64Type)
		return protowire.AppendFixed64(b, math.Float64bits(v.AsFloat64()))
	case attribute.STRING:
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		return protowire.AppendString(b, v.AsString())
	case attribute.BYTESLICE:
		b = protowire.AppendTag(b, 7, protowire.BytesType)
		return protowire.AppendBytes(b, v.AsByteSlice())
	case attribute.BOOLSLICE:
		return array(b, len(v.AsBoolSlice()), func(i int) attribute.Value { return attribute.BoolValue(v.AsBoolSlice()[i]) })
	case attribute.INT64SLICE:
		s := v.AsInt64Slice()
		return array(b, len(s), func(i int) attribute.Value { return attribute.Int64Value(s[i]) })
	case attribute.FLOAT64SLICE:
		s := v.AsFloat64Slice()
		return array(b, len(s), func(i int) attribute.Value { return attribute.Float64Value(s[i]) })
	case attribute.STRINGSLICE:
		s := v.AsStringSlice()
		return array(b, len(s), func(i int) attribute.Value { return attribute.StringValue(s[i]) })
	case attribute.SLICE:
		s := v.AsSlice()
		return array(b, len(s), func(i int) attribute.Value { return s[i] })
	case attribute.MAP:
		kvs := v.AsMap()
		return msg(b, 6, true, func(b []byte) []byte {
			for _, kv := range kvs {
				b = keyValue(b, 1, kv)
			}
			return b
		})
	}
	return b
}

// array writes an AnyValue's array_value of n values.
func array(b []byte, n int, at func(int) attribute.Value) []byte {
	return msg(b, 5, true, func(b []byte) []byte {
		for i := 0; i < n; i++ {
			b = msg(b, 1, true, func(b []byte) []byte { return anyValue(b, at(i)) })
		}
		return b
	})
}

// keyValue writes field num holding one KeyValue.
func keyValue(b []byte, num protowire.Number, kv attribute.KeyValue) []byte {
	return msg(b, num, true, func(b []byte) []byte {
		b = str(b, 1, string(kv.Key))
		return msg(b, 2, true, func(b []byte) []byte { return anyValue(b, kv.Value) })
	})
}

func attrs(b []byte, num protowire.Number, kvs []attribute.KeyValue) []byte {
	for _, kv := range kvs {
		b = keyValue(b, num, kv)
	}
	return b
}

func resourceMsg(b []byte, num protowire.Number, r *resource.Resource) []byte {
	return msg(b, num, true, func(b []byte) []byte {
		if r == nil {
			return b
		}
		return attrs(b, 1, r.Attributes())
	})
}

func scopeMsg(b []byte, num protowire.Number, s instrumentation.Scope) []byte {
	return msg(b, num, true, func(b []byte) []byte {
		b = str(b, 1, s.Name)
		b = str(b, 2, s.Version)
		return attrs(b, 3, s.Attributes.ToSlice())
	})
}

// Span flags (trace.proto's SpanFlags): the W3C trace flags in the low
// byte, and whether the parent (or a link's context) is remote; a span
// always says whether its parent is remote (a root's is not).
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

func spanFlags(tf byte, hasParent, remote bool) uint32 {
	f := uint32(tf)
	if hasParent {
		f |= flagHasIsRemote
		if remote {
			f |= flagIsRemote
		}
	}
	return f
}

// statusCode maps the Go API's codes (Unset 0, Error 1, Ok 2) to OTLP's
// (UNSET 0, OK 1, ERROR 2).
func statusCode(c codes.Code) uint64 {
	switch c {
	case codes.Ok:
		return 1
	case codes.Error:
		return 2
	}
	return 0
}

// EncodeTraces writes an ExportTraceServiceRequest
// (collector/trace/v1/trace_service.proto) holding spans, grouped by
// resource and then by instrumentation scope in the order first seen.
func EncodeTraces(spans []sdktrace.ReadOnlySpan) []byte {
	type scopeKey struct {
		name, version, schema string
		attrs                 attribute.Distinct
	}
	type group struct {
		res    *resource.Resource
		scopes []scopeKey
		spans  map[scopeKey][]sdktrace.ReadOnlySpan
		scope  map[scopeKey]instrumentation.Scope
	}
	var groups []*group
	byRes := map[attribute.Distinct]*group{}
	for _, s := range spans {
		res := s.Resource()
		var rk attribute.Distinct
		if res != nil {
			rk = res.Equivalent()
		}
		g := byRes[rk]
		if g == nil {
			g = &group{res: res, spans: map[scopeKey][]sdktrace.ReadOnlySpan{}, scope: map[scopeKey]instrumentation.Scope{}}
			byRes[rk] = g
			groups = append(groups, g)
		}
		sc := s.InstrumentationScope()
		k := scopeKey{sc.Name, sc.Version, sc.SchemaURL, sc.Attributes.Equivalent()}
		if _, ok := g.spans[k]; !ok {
			g.scopes = append(g.scopes, k)
			g.scope[k] = sc
		}
		g.spans[k] = append(g.spans[k], s)
	}
	var b []byte
	for _, g := range groups {
		b = msg(b, 1, true, func(b []byte) []byte {
			b = resourceMsg(b, 1, g.res)
			for _, k := range g.scopes {
				b = msg(b, 2, true, func(b []byte) []byte {
					b = scopeMsg(b, 1, g.scope[k])
					for _, s := range g.spans[k] {
						b = msg(b, 2, true, func(b []byte) []byte { return spanMsg(b, s) })
					}
					return str(b, 3, k.schema)
				})
			}
			if g.res != nil {
				b = str(b, 3, g.res.SchemaURL())
			}
			return b
		})
	}
	return b
}

func spanMsg(b []byte, s sdktrace.ReadOnlySpan) []byte {
	sc, parent := s.SpanContext(), s.Parent()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = byts(b, 1, tid[:])
	b = byts(b, 2, sid[:])
	b = str(b, 3, sc.TraceState().String())
	if parent.SpanID().IsValid() {
		psid := parent.SpanID()
		b = byts(b, 4, psid[:])
	}
	b = str(b, 5, s.Name())
	b = varint(b, 6, uint64(s.SpanKind()))
	b = fixed64(b, 7, unixNano(s.StartTime()))
	b = fixed64(b, 8, unixNano(s.EndTime()))
	b = attrs(b, 9, s.Attributes())
	b = varint(b, 10, uint64(s.DroppedAttributes()))
	for _, e := range s.Events() {
		b = msg(b, 11, true, func(b []byte) []byte {
			b = fixed64(b, 1, unixNano(e.Time))
			b = str(b, 2, e.Name)
			b = attrs(b, 3, e.Attributes)
			return varint(b, 4, uint64(e.DroppedAttributeCount))
		})
	}
	b = varint(b, 12, uint64(s.DroppedEvents()))
	for _, l := range s.Links() {
		b = msg(b, 13, true, func(b []byte) []byte {
			ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
			b = byts(b, 1, ltid[:])
			b = byts(b, 2, lsid[:])
			b = str(b, 3, l.SpanContext.TraceState().String())
			b = attrs(b, 4, l.Attributes)
			b = varint(b, 5, uint64(l.DroppedAttributeCount))
			return fixed32(b, 6, spanFlags(byte(l.SpanContext.TraceFlags()), true, l.SpanContext.IsRemote()))
		})
	}
	b = varint(b, 14, uint64(s.DroppedLinks()))
	st := s.Status()
	b = msg(b, 15, true, func(b []byte) []byte {
		b = str(b, 2, st.Description)
		return varint(b, 3, statusCode(st.Code))
	})
	return fixed32(b, 16, spanFlags(byte(sc.TraceFlags()), true, parent.IsRemote()))
}

// temporality maps the SDK's (Cumulative 1, Delta 2) to OTLP's
// AggregationTemporality (DELTA 1, CUMULATIVE 2).
func temporality(t metricdata.Temporality) uint64 {
	switch t {
	case metricdata.DeltaTemporality:
		return 1
	case metricdata.CumulativeTemporality:
		return 2
	}
	return 0
}

// EncodeMetrics writes an ExportMetricsServiceRequest
// (collector/metrics/v1/metrics_service.proto) holding rm.
func EncodeMetrics(rm *metricdata.ResourceMetrics) []byte {
	var b []byte
	return msg(b, 1, true, func(b []byte) []byte {
		b = resourceMsg(b, 1, rm.Resource)
		for _, sm := range rm.ScopeMetrics {
			b = msg(b, 2, true, func(b []byte) []byte {
				b = scopeMsg(b, 1, sm.Scope)
				for _, m := range sm.Metrics {
					b = msg(b, 2, true, func(b []byte) []byte { return metricMsg(b, m) })
				}
				return str(b, 3, sm.Scope.SchemaURL)
			})
		}
		if rm.Resource != nil {
			b = str(b, 3, rm.Resource.SchemaURL())
		}
		return b
	})
}

func metricMsg(b []byte, m metricdata.Metrics) []byte {
	b = str(b, 1, m.Name)
	b = str(b, 2, m.Description)
	b = str(b, 3, m.Unit)
	switch d := m.Data.(type) {
	case metricdata.Gauge[int64]:
		b = msg(b, 5, true, func(b []byte) []byte { return numberPoints(b, d.DataPoints) })
	case metricdata.Gauge[float64]:
		b = msg(b, 5, true, func(b []byte) []byte { return numberPoints(b, d.DataPoints) })
	case metricdata.Sum[int64]:
		b = msg(b, 7, true, func(b []byte) []byte { return sumMsg(numberPoints(b, d.DataPoints), d.Temporality, d.IsMonotonic) })
	case metricdata.Sum[float64]:
		b = msg(b, 7, true, func(b []byte) []byte { return sumMsg(numberPoints(b, d.DataPoints), d.Temporality, d.IsMonotonic) })
	case metricdata.Histogram[int64]:
		b = msg(b, 9, true, func(b []byte) []byte { return varint(histogramPoints(b, d.DataPoints), 2, temporality(d.Temporality)) })
	case metricdata.Histogram[float64]:
		b = msg(b, 9, true, func(b []byte) []byte { return varint(histogramPoints(b, d.DataPoints), 2, temporality(d.Temporality)) })
	case metricdata.ExponentialHistogram[int64]:
		b = msg(b, 10, true, func(b []byte) []byte { return varint(expPoints(b, d.DataPoints), 2, temporality(d.Temporality)) })
	case metricdata.ExponentialHistogram[float64]:
		b = msg(b, 10, true, func(b []byte) []byte { return varint(expPoints(b, d.DataPoints), 2, temporality(d.Temporality)) })
	case metricdata.Summary:
		b = msg(b, 11, true, func(b []byte) []byte { return summaryPoints(b, d.DataPoints) })
	}
	return b
}

func sumMsg(b []byte, t metricdata.Temporality, monotonic bool) []byte {
	b = varint(b, 2, temporality(t))
	if monotonic {
		b = varint(b, 3, 1)
	}
	return b
}

// number writes a value of the oneof as_double (field dbl) / as_int (field
// i64), both fixed64 on the wire; the oneof is written even when zero.
func number[N int64 | float64](b []byte, dbl, i64 protowire.Number, v N) []byte {
	switch x := any(v).(type) {
	case int64:
		b = protowire.AppendTag(b, i64, protowire.Fixed64Type)
		return protowire.AppendFixed64(b, uint64(x))
	case float64:
		b = protowire.AppendTag(b, dbl, protowire.Fixed64Type)
		return protowire.AppendFixed64(b, math.Float64bits(x))
	}
	return b
}

func exemplars[N int64 | float64](b []byte, num protowire.Number, es []metricdata.Exemplar[N]) []byte {
	for _, e := range es {
		b = msg(b, num, true, func(b []byte) []byte {
			b = fixed64(b, 2, unixNano(e.Time))
			b = number(b, 3, 6, e.Value)
			b = byts(b, 4, e.SpanID)
			b = byts(b, 5, e.TraceID)
			return attrs(b, 7, e.FilteredAttributes)
		})
	}
	return b
}

func numberPoints[N int64 | float64](b []byte, dps []metricdata.DataPoint[N]) []byte {
	for _, dp := range dps {
		b = msg(b, 1, true, func(b []byte) []byte {
			b = fixed64(b, 2, unixNano(dp.StartTime))
			b = fixed64(b, 3, unixNano(dp.Time))
			b = number(b, 4, 6, dp.Value)
			b = exemplars(b, 5, dp.Exemplars)
			return attrs(b, 7, dp.Attributes.ToSlice())
		})
	}
	return b
}

func histogramPoints[N int64 | float64](b []byte, dps []metricdata.HistogramDataPoint[N]) []byte {
	for _, dp := range dps {
		b = msg(b, 1, true, func(b []byte) []byte {
			b = fixed64(b, 2, unixNano(dp.StartTime))
			b = fixed64(b, 3, unixNano(dp.Time))
			b = fixed64(b, 4, dp.Count)
			b = optDouble(b, 5, float64(dp.Sum))
			if len(dp.BucketCounts) > 0 {
				b = protowire.AppendTag(b, 6, protowire.BytesType)
				b = protowire.AppendVarint(b, uint64(8*len(dp.BucketCounts)))
				for _, c := range dp.BucketCounts {
					b = protowire.AppendFixed64(b, c)
				}
			}
			if len(dp.Bounds) > 0 {
				b = protowire.AppendTag(b, 7, protowire.BytesType)
				b = protowire.AppendVarint(b, uint64(8*len(dp.Bounds)))
				for _, x := range dp.Bounds {
					b = protowire.AppendFixed64(b, math.Float64bits(x))
				}
			}
			b = exemplars(b, 8, dp.Exemplars)
			b = attrs(b, 9, dp.Attributes.ToSlice())
			if v, ok := dp.Min.Value(); ok {
				b = optDouble(b, 11, float64(v))
			}
			if v, ok := dp.Max.Value(); ok {
				b = optDouble(b, 12, float64(v))
			}
			return b
		})
	}
	return b
}

func buckets(b []byte, num protowire.Number, eb metricdata.ExponentialBucket) []byte {
	return msg(b, num, true, func(b []byte) []byte {
		b = varint(b, 1, protowire.EncodeZigZag(int64(eb.Offset)))
		if len(eb.Counts) > 0 {
			var packed []byte
			for _, c := range eb.Counts {
				packed = protowire.AppendVarint(packed, c)
			}
			b = protowire.AppendTag(b, 2, protowire.BytesType)
			b = protowire.AppendBytes(b, packed)
		}
		return b
	})
}

func expPoints[N int64 | float64](b []byte, dps []metricdata.ExponentialHistogramDataPoint[N]) []byte {
	for _, dp := range dps {
		b = msg(b, 1, true, func(b []byte) []byte {
			b = attrs(b, 1, dp.Attributes.ToSlice())
			b = fixed64(b, 2, unixNano(dp.StartTime))
			b = fixed64(b, 3, unixNano(dp.Time))
			b = fixed64(b, 4, dp.Count)
			b = optDouble(b, 5, float64(dp.Sum))
			b = varint(b, 6, protowire.EncodeZigZag(int64(dp.Scale)))
			b = fixed64(b, 7, dp.ZeroCount)
			b = buckets(b, 8, dp.PositiveBucket)
			b = buckets(b, 9, dp.NegativeBucket)
			b = exemplars(b, 11, dp.Exemplars)
			if v, ok := dp.Min.Value(); ok {
				b = optDouble(b, 12, float64(v))
			}
			if v, ok := dp.Max.Value(); ok {
				b = optDouble(b, 13, float64(v))
			}
			return double(b, 14, dp.ZeroThreshold)
		})
	}
	return b
}

func summaryPoints(b []byte, dps []metricdata.SummaryDataPoint) []byte {
	for _, dp := range dps {
		b = msg(b, 1, true, func(b []byte) []byte {
			b = fixed64(b, 2, unixNano(dp.StartTime))
			b = fixed64(b, 3, unixNano(dp.Time))
			b = fixed64(b, 4, dp.Count)
			b = double(b, 5, dp.Sum)
			for _, q := range dp.QuantileValues {
				b = msg(b, 6, true, func(b []byte) []byte {
					b = double(b, 1, q.Quantile)
					return double(b, 2, q.Value)
				})
			}
			return attrs(b, 7, dp.Attributes.ToSlice())
		})
	}
	return b
}
