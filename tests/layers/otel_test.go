package layers

import (
	"os/exec"
	"strings"
	"testing"
)

// sdkOnly are the import paths only a program's set-up may link: the
// OpenTelemetry SDK, its exporters, and gRPC (which the OTLP/gRPC exporters
// pull in). A library records through the OpenTelemetry API (otel,
// otel/trace, otel/metric, attribute, codes) and leaves the SDK to the
// program, as OpenTelemetry's guidance for libraries asks; package
// otelsetup holds toolselect's SDK set-up for cmd/ and cabi/.
var sdkOnly = []string{
	"go.opentelemetry.io/otel/sdk",
	"go.opentelemetry.io/otel/exporters",
	"google.golang.org/grpc",
}

func TestLibraryPackagesImportTheOTelAPIOnly(t *testing.T) {
	for _, pkg := range libraryPackages {
		path := mod + "/" + pkg
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", path).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", path, err, out)
		}
		var reached []string
		for _, dep := range strings.Fields(string(out)) {
			for _, p := range sdkOnly {
				if dep == p || strings.HasPrefix(dep, p+"/") {
					reached = append(reached, dep)
				}
			}
		}
		if len(reached) > 0 {
			t.Errorf("%s links %d packages of the OpenTelemetry SDK, its exporters or gRPC (first: %s): set telemetry up in otelsetup, which only programs import",
				pkg, len(reached), reached[0])
		}
	}
}
