#!/usr/bin/env bash
# bench/binsize.sh: what each part of the command adds to its size, as the
# release builds it (-trimpath -ldflags '-s -w', BUILDTAGS' tags, CGO_ENABLED=0, this machine's
# GOOS/GOARCH). Each part is a small program that uses it for real (so the
# linker keeps what the command keeps), built in this module (so at the
# versions go.mod pins); its figure is its size minus the baseline's (the Go
# runtime, net/http and encoding/json, which the command has anyway). The
# parts share dependencies (protobuf, x/net, ...), so they do not add up to
# the command; the embedded word tables are their files' sizes (go:embed
# stores them verbatim). Prints a Markdown table; docs/packaging.md has one.
#
#   bash bench/binsize.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
GO=${GO:-go}
work="$root/.cache/binsize"
rm -rf "$work"
mkdir -p "$work"

part() { # part NAME IMPORTS BODY: write a program using a part
	mkdir -p "$work/$1"
	cat >"$work/$1/main.go" <<EOF
package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
$2
)

func main() {
	b, _ := json.Marshal(os.Args)
	fmt.Println(string(b), http.ListenAndServe(os.Getenv("ADDR"), nil))
$3
}
EOF
}

part base "" ""
part tiktoken-go '"github.com/tiktoken-go/tokenizer/codec"' '
	for _, c := range []*codec.Codec{codec.NewO200kBase(), codec.NewCl100kBase()} {
		fmt.Println(c.Count(os.Args[0]))
	}'
part redis '"context"
	"github.com/redis/go-redis/v9"' '
	fmt.Println(redis.NewClient(&redis.Options{Addr: os.Args[0]}).Ping(context.Background()).Err())
	fmt.Println(redis.NewClusterClient(&redis.ClusterOptions{Addrs: os.Args}).Ping(context.Background()).Err())'
part otel '"context"
	"github.com/toolselect/toolselect/otelsetup"' '
	stop, err := otelsetup.Setup(context.Background(), os.Getenv, os.Stderr)
	fmt.Println(err, stop(context.Background()))'
part prometheus '"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"' '
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), prometheus.NewCounter(prometheus.CounterOpts{Name: "x"}))
	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))'
part mcp-sdk '"context"
	"github.com/modelcontextprotocol/go-sdk/mcp"' '
	s := mcp.NewServer(&mcp.Implementation{Name: "x"}, nil)
	fmt.Println(s.Run(context.Background(), &mcp.StdioTransport{}))
	c := mcp.NewClient(&mcp.Implementation{Name: "x"}, nil)
	_, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: os.Args[0]}, nil)
	fmt.Println(err, http.ListenAndServe("", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)))'
part validator '"github.com/go-playground/validator/v10"' '
	fmt.Println(validator.New().Var(os.Args[0], "required,url"))'
part santhosh-jsonschema '"github.com/santhosh-tekuri/jsonschema/v6"' '
	c := jsonschema.NewCompiler()
	fmt.Println(c.AddResource("x.json", os.Args), c.MustCompile("x.json").Validate(os.Args))'
part go-openai '"context"
	openai "github.com/sashabaranov/go-openai"' '
	_, err := openai.NewClient(os.Args[0]).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{Model: os.Args[0]})
	fmt.Println(err)'
part command "" ""
rm -rf "$work/command"
gofmt -w "$work" # the programs are Go like any other: formatted as gofmt writes them

size() { stat -c %s "$1"; }
tags=$(grep -v '^#' BUILDTAGS | head -n 1) # the release's tags (BUILDTAGS says why)
build() { CGO_ENABLED=0 "$GO" build -trimpath -tags "$tags" -ldflags='-s -w' -o "$work/$1.bin" "$2"; }
build base ./.cache/binsize/base
base=$(size "$work/base.bin")
build command ./cmd/toolselect
full=$(size "$work/command.bin")
mb() { awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1e6 }'; }

echo "| part | adds |"
echo "|---|---|"
echo "| the whole command (\`$($GO env GOOS)/$($GO env GOARCH)\`, -s -w, -tags $tags) | $(mb "$full") |"
echo "| Go runtime, net/http, encoding/json (the baseline) | $(mb "$base") |"
for p in otel redis prometheus mcp-sdk validator santhosh-jsonschema go-openai tiktoken-go; do
	build "$p" "./.cache/binsize/$p"
	note=""
	[ "$p" = otel ] && note=" (otelsetup: the SDK, the console exporters, and the OTLP/HTTP exporters of otelsetup/internal/otlphttp with protobuf's protowire)"
	[ "$p" = tiktoken-go ] && note=" (its o200k and cl100k vocabularies as Go map literals: no longer linked, for comparison)"
	echo "| $p$note | $(mb $(($(size "$work/$p.bin") - base))) |"
done
bpe=$(($(size rank/internal/bpe/o200k_base.txt) + $(size rank/internal/bpe/cl100k_base.txt)))
echo "| token vocabularies (rank/internal/bpe/*.txt, embedded; what replaced tiktoken-go) | $(mb "$bpe") |"
cedict=$(($(size rank/internal/cedict/zh_en.txt) + $(size rank/internal/cedict/zh_en_shared.txt)))
echo "| CC-CEDICT table (rank/internal/cedict/zh_en.txt and zh_en_shared.txt, embedded: shared glosses stored once) | $(mb "$cedict") |"
echo "| WordNet table (rank/internal/wordnet/related.packed, embedded: words plain, related words deflated) | $(mb "$(size rank/internal/wordnet/related.packed)") |"
