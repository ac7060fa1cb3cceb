package otlphttp

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// Signal is one OTLP signal: its path under a base endpoint and the word
// its per-signal variables carry (OTEL_EXPORTER_OTLP_TRACES_HEADERS).
type Signal struct {
	Path string // "/v1/traces"
	Word string // "TRACES"
}

var (
	Traces  = Signal{"/v1/traces", "TRACES"}
	Metrics = Signal{"/v1/metrics", "METRICS"}
)

// Config is what the OTEL_EXPORTER_OTLP_* environment says for a signal.
type Config struct {
	URL         string
	Headers     http.Header
	Timeout     time.Duration
	Gzip        bool
	TLS         *tls.Config // nil: Go's defaults
	Temporality func(sdkmetric.InstrumentKind) metricdata.Temporality
	Aggregation func(sdkmetric.InstrumentKind) sdkmetric.Aggregation
}

// defaultTimeout is the specification's OTEL_EXPORTER_OTLP_TIMEOUT default.
const defaultTimeout = 10 * time.Second

// FromEnv reads the OTLP exporter variables of the OpenTelemetry
// specification for sig: per-signal ones (OTEL_EXPORTER_OTLP_TRACES_*)
// before the general ones. ENDPOINT (general: a base URL the signal's path
// is appended to; per-signal: the URL as is, "/" when it has no path;
// default http://localhost:4318), HEADERS (key=value pairs separated by
// commas, values percent-decoded; the per-signal ones override the general
// ones key by key), TIMEOUT (milliseconds, default 10000), COMPRESSION
// (gzip or none), CERTIFICATE, CLIENT_CERTIFICATE and CLIENT_KEY (PEM
// files), and for metrics TEMPORALITY_PREFERENCE (cumulative, delta,
// lowmemory) and DEFAULT_HISTOGRAM_AGGREGATION (explicit_bucket_histogram,
// base2_exponential_bucket_histogram). A value that cannot be used is a
// warning naming the variable and the default is kept; an endpoint or a
// certificate that cannot be used is an error (nothing would be sent where
// the user meant).
func FromEnv(sig Signal, getenv func(string) string) (cfg Config, warnings []string, err error) {
	get := func(name string) (string, string) {
		for _, k := range []string{"OTEL_EXPORTER_OTLP_" + sig.Word + "_" + name, "OTEL_EXPORTER_OTLP_" + name} {
			if v := strings.TrimSpace(getenv(k)); v != "" {
				return k, v
			}
		}
		return "", ""
	}
	cfg.URL = "http://localhost:4318" + sig.Path
	if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_" + sig.Word + "_ENDPOINT")); v != "" {
		u, err := endpointURL("OTEL_EXPORTER_OTLP_"+sig.Word+"_ENDPOINT", v)
		if err != nil {
			return cfg, nil, err
		}
		if u.Path == "" {
			u.Path = "/"
		}
		cfg.URL = u.String()
	} else if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")); v != "" {
		u, err := endpointURL("OTEL_EXPORTER_OTLP_ENDPOINT", v)
		if err != nil {
			return cfg, nil, err
		}
		u.Path = strings.TrimSuffix(u.Path, "/") + sig.Path
		cfg.URL = u.String()
	}

	cfg.Headers = http.Header{}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_" + sig.Word + "_HEADERS"} {
		for _, pair := range strings.Split(getenv(k), ",") {
			if strings.TrimSpace(pair) == "" {
				continue
			}
			name, value, ok := strings.Cut(pair, "=")
			name = strings.TrimSpace(name)
			if !ok || name == "" || strings.ContainsFunc(name, func(r rune) bool { return r <= ' ' || r >= 0x7f || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) }) {
				warnings = append(warnings, fmt.Sprintf("%s: %q is not key=value; left out", k, redactPair(pair)))
				continue
			}
			dec, err := url.PathUnescape(value)
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("%s: the value of %q is not percent-encoded text; left out", k, name))
				continue
			}
			dec = strings.TrimSpace(dec)
			if strings.ContainsFunc(dec, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
				// %0D%0A would end the header in the request: Go refuses
				// to send it, and every export would fail.
				warnings = append(warnings, fmt.Sprintf("%s: the value of %q holds control characters (a line break, say); left out", k, name))
				continue
			}
			cfg.Headers.Set(name, dec)
		}
	}

	cfg.Timeout = defaultTimeout
	if k, v := get("TIMEOUT"); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms <= 0 {
			warnings = append(warnings, fmt.Sprintf("%s=%q: want a number of milliseconds above 0; using %d", k, v, defaultTimeout.Milliseconds()))
		} else {
			cfg.Timeout = time.Duration(ms) * time.Millisecond
		}
	}
	if k, v := get("COMPRESSION"); v != "" {
		switch strings.ToLower(v) {
		case "gzip":
			cfg.Gzip = true
		case "none":
		default:
			warnings = append(warnings, fmt.Sprintf("%s=%q: want gzip or none; sending uncompressed", k, v))
		}
	}

	var tlsConf tls.Config
	if k, v := get("CERTIFICATE"); v != "" {
		pem, err := os.ReadFile(v)
		if err != nil {
			return cfg, warnings, fmt.Errorf("%s: %w", k, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return cfg, warnings, fmt.Errorf("%s=%s: no PEM certificate in the file", k, v)
		}
		tlsConf.RootCAs = pool
		cfg.TLS = &tlsConf
	}
	kc, certFile := get("CLIENT_CERTIFICATE")
	kk, keyFile := get("CLIENT_KEY")
	switch {
	case certFile != "" && keyFile != "":
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return cfg, warnings, fmt.Errorf("%s and %s: %w", kc, kk, err)
		}
		tlsConf.Certificates = []tls.Certificate{cert}
		cfg.TLS = &tlsConf
	case certFile != "":
		return cfg, warnings, fmt.Errorf("%s is set but no CLIENT_KEY: a client certificate needs its key", kc)
	case keyFile != "":
		return cfg, warnings, fmt.Errorf("%s is set but no CLIENT_CERTIFICATE: a client key needs its certificate", kk)
	}

	if sig == Metrics {
		cfg.Temporality = sdkmetric.DefaultTemporalitySelector
		k := "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE"
		switch v := strings.ToLower(strings.TrimSpace(getenv(k))); v {
		case "", "cumulative":
		case "delta":
			cfg.Temporality = deltaTemporality
		case "lowmemory":
			cfg.Temporality = lowMemoryTemporality
		default:
			warnings = append(warnings, fmt.Sprintf("%s=%q: want cumulative, delta or lowmemory; using cumulative", k, v))
		}
		cfg.Aggregation = sdkmetric.DefaultAggregationSelector
		k = "OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION"
		switch v := strings.ToLower(strings.TrimSpace(getenv(k))); v {
		case "", "explicit_bucket_histogram":
		case "base2_exponential_bucket_histogram":
			cfg.Aggregation = exponentialHistograms
		default:
			warnings = append(warnings, fmt.Sprintf("%s=%q: want explicit_bucket_histogram or base2_exponential_bucket_histogram; using explicit_bucket_histogram", k, v))
		}
	}
	return cfg, warnings, nil
}

// endpointURL parses an endpoint variable: an http or https URL.
func endpointURL(name, v string) (*url.URL, error) {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s=%q: want an http:// or https:// URL (OTLP over HTTP)", name, v)
	}
	return u, nil
}

// redactPair shows a malformed header pair without what may be a secret:
// its first characters only.
func redactPair(p string) string {
	p = strings.TrimSpace(p)
	if len(p) > 8 {
		return p[:8] + "..."
	}
	return p
}

// deltaTemporality is the specification's "delta" preference: counters
// (synchronous and observable) and histograms delta, up-down counters
// cumulative.
func deltaTemporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	switch k {
	case sdkmetric.InstrumentKindCounter, sdkmetric.InstrumentKindObservableCounter, sdkmetric.InstrumentKindHistogram:
		return metricdata.DeltaTemporality
	}
	return metricdata.CumulativeTemporality
}

// lowMemoryTemporality is "lowmemory": synchronous counters and histograms
// delta, the rest cumulative.
func lowMemoryTemporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	switch k {
	case sdkmetric.InstrumentKindCounter, sdkmetric.InstrumentKindHistogram:
		return metricdata.DeltaTemporality
	}
	return metricdata.CumulativeTemporality
}

// exponentialHistograms is base2_exponential_bucket_histogram: histograms
// as base-2 exponential histograms of at most 160 buckets (the
// specification's defaults), the rest as by default.
func exponentialHistograms(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	if k == sdkmetric.InstrumentKindHistogram {
		return sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: 160, MaxScale: 20}
	}
	return sdkmetric.DefaultAggregationSelector(k)
}
