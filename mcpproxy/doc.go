// Package mcpproxy is toolselect's MCP front door: a proxy that connects to
// upstream MCP servers as a client, imports every upstream tool into a
// [registry.Registry] (named "server__tool", schemas kept, annotations mapped),
// and serves MCP to an agent with only two meta-tools, find_tool and
// call_tool, plus a short keep-list of tools shown in full. The agent's
// prompt therefore stays small however large the catalog grows, and every
// call is validated against the upstream's schema before it reaches the
// server. Calls run through one [executor.Executor] (each upstream tool a
// handler; find_tool and call_tool are its meta-tools), and everything else
// the upstreams offer passes through: resources, resource templates and
// prompts (namespaced like tools), reads, prompt gets, completions,
// subscriptions with their updates, list_changed, and the progress, log
// messages and cancellation of a call.
//
//	func main() {
//		cfg, err := mcpproxy.LoadConfig("proxy.json") // upstream servers, catalogs, the keep-list
//		if err != nil {
//			log.Fatal(err)
//		}
//		p, err := mcpproxy.New(cfg, nil)
//		if err != nil {
//			log.Fatal(err)
//		}
//		defer p.Close()
//		ctx := context.Background()
//		if err := p.Start(ctx); err != nil { // connect, import every upstream tool
//			log.Fatal(err)
//		}
//		log.Fatal(p.ServeStdio(ctx, os.Stdin, os.Stdout, 5*time.Second)) // find_tool and call_tool
//	}
//
// It is built on the official Go SDK (github.com/modelcontextprotocol/go-sdk):
// [Proxy.Server] returns the *mcp.Server, [Proxy.ServeStdio] runs it over stdio
// (draining in-flight replies when stdin closes) and [Proxy.HTTPHandler] serves
// streamable HTTP for every protocol version the SDK speaks, with DNS
// rebinding protection.
//
// # Start here
//
//   - [New] makes a [Proxy] from a [Config] ([LoadConfig] reads the JSON
//     file); [Proxy.Start] imports the upstreams; [Proxy.ServeStdio] or
//     [Proxy.ListenAndServe] (with [HTTPOptions]: a bearer token or [OAuth], limits) serves it.
//   - [Proxy.FindTool] and [Proxy.CallTool] are the meta-tools' logic;
//     [Proxy.Stats] and [Proxy.MetricsHandler] report what it does.
package mcpproxy
