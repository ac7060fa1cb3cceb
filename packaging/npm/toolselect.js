#!/usr/bin/env node
// The `toolselect` command of the npm package: runs the Go binary from the
// per-platform package npm installed beside this one (an optional dependency
// whose os and cpu fields match this machine), with the same arguments,
// stdin, stdout and stderr, and exits with its status. `npx -y toolselect mcp`
// in an MCP client's configuration starts the proxy this way.
"use strict";
const { spawnSync } = require("child_process");

// process.platform-process.arch -> the package holding that binary.
const PACKAGES = {
  "linux-x64": "@toolselect/linux-x64",
  "linux-arm64": "@toolselect/linux-arm64",
  "darwin-x64": "@toolselect/darwin-x64",
  "darwin-arm64": "@toolselect/darwin-arm64",
  "win32-x64": "@toolselect/win32-x64",
};

function binary() {
  const key = `${process.platform}-${process.arch}`;
  const pkg = PACKAGES[key];
  if (!pkg) {
    fail(
      `toolselect: no prebuilt binary for this platform (${key}). The npm packages cover ` +
        `${Object.keys(PACKAGES).join(", ")}. Elsewhere, build it with Go: ` +
        "go install github.com/toolselect/toolselect/cmd/toolselect@latest",
    );
  }
  const exe = process.platform === "win32" ? "toolselect.exe" : "toolselect";
  try {
    return require.resolve(`${pkg}/bin/${exe}`);
  } catch (e) {
    fail(
      `toolselect: the package ${pkg}, which holds the binary for ${key}, is not installed. ` +
        "npm installs it as an optional dependency of toolselect; it is skipped when optional " +
        "dependencies are turned off (--omit=optional, --no-optional) or when a lockfile made on " +
        `another platform left it out. Reinstall with optional dependencies, or: npm install ${pkg}`,
    );
  }
}

function fail(message) {
  process.stderr.write(message + "\n");
  process.exit(1);
}

const r = spawnSync(binary(), process.argv.slice(2), { stdio: "inherit", windowsHide: true });
if (r.error) {
  fail(`toolselect: could not run ${r.error.path || "the binary"}: ${r.error.message}`);
}
if (r.signal) {
  process.kill(process.pid, r.signal);
}
process.exit(r.status === null ? 1 : r.status);
