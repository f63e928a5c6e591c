import assert from "node:assert/strict";
import {
  allocatorLine,
  GATEWAY_MALLOC_CONF,
  gatewayAllocatorEnv,
  jemallocMissingMessage,
  jemallocPath,
  preloadable,
} from "./allocator.ts";
import { RUN_FLAGS } from "./launcher.ts";
import { burst } from "./testing/burst.ts";

async function installedJemalloc(): Promise<string> {
  const path = await jemallocPath();
  assert.ok(path !== null, jemallocMissingMessage());
  return path;
}

Deno.test("on the gateway's allocator, a burst's freed pages go back without a trim", async () => {
  const env = gatewayAllocatorEnv(await installedJemalloc(), {});
  // Collected at once: V8 decides when garbage outside its heap is collected, whatever the
  // allocator; this is what the allocator does with the pages once it is.
  const onJemalloc = await burst(RUN_FLAGS, env, { collect: true });
  assert.ok(onJemalloc.peak - onJemalloc.before > 60, JSON.stringify(onJemalloc));
  assert.ok(
    onJemalloc.peak - onJemalloc.after > 40,
    `not given back: ${JSON.stringify(onJemalloc)}`,
  );
  // The same process on glibc's malloc, with no trim granted (the gateway's flags): they stay.
  const onGlibc = await burst(RUN_FLAGS, {}, { collect: true });
  assert.ok(onGlibc.peak - onGlibc.after < 20, `given back on glibc: ${JSON.stringify(onGlibc)}`);
});

Deno.test("the gateway preloads jemalloc with its settings; the operator's own preload or settings win", () => {
  const path = "/usr/lib/test-arch/libjemalloc.so.2";
  assert.deepEqual(gatewayAllocatorEnv(path, {}), {
    LD_PRELOAD: path,
    MALLOC_CONF: GATEWAY_MALLOC_CONF,
  });
  assert.deepEqual(gatewayAllocatorEnv(path, { LD_PRELOAD: "/opt/profiler.so" }), {});
  // Set but empty is no preload.
  assert.deepEqual(gatewayAllocatorEnv(path, { LD_PRELOAD: "" }).LD_PRELOAD, path);
  // Their settings reach the gateway by inheritance; ours are not written over them.
  assert.deepEqual(gatewayAllocatorEnv(path, { MALLOC_CONF: "narenas:2" }), { LD_PRELOAD: path });
  assert.deepEqual(gatewayAllocatorEnv(null, {}), {});
  assert.equal(allocatorLine(path, {}), `the gateway runs on jemalloc (${path})`);
  assert.match(allocatorLine(path, { LD_PRELOAD: "/opt/profiler.so" }), /LD_PRELOAD it was given/);
  assert.match(allocatorLine(null, { LD_PRELOAD: "/opt/profiler.so" }), /LD_PRELOAD it was given/);
  assert.match(allocatorLine(null, {}, "linux"), /libjemalloc2 is not installed/);
  assert.equal(allocatorLine(null, {}, "darwin"), "the gateway runs on the system's allocator");
});

Deno.test("only a file root owns and nobody else may write is preloaded", () => {
  const file = { isFile: true, uid: 0, mode: 0o100644 };
  assert.equal(preloadable(file), true);
  assert.equal(preloadable({ ...file, uid: 1000 }), false);
  assert.equal(preloadable({ ...file, mode: 0o100664 }), false, "group-writable");
  assert.equal(preloadable({ ...file, mode: 0o100646 }), false, "writable by anyone");
  assert.equal(preloadable({ ...file, isFile: false }), false);
  assert.equal(preloadable({ ...file, mode: null }), false);
});

Deno.test("jemalloc accepts the gateway's settings as they are written", async () => {
  // jemalloc says "<jemalloc>: Invalid conf pair" on stderr for a setting it does not know, and
  // goes on with its defaults; Deno.Command's output would hide that.
  const env = gatewayAllocatorEnv(await installedJemalloc(), {});
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "console.log(1)"],
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(new TextDecoder().decode(out.stderr), "");
  assert.equal(new TextDecoder().decode(out.stdout).trim(), "1");
});

Deno.test("the Dockerfile preloads jemalloc, with the launcher's settings, for the gateway only", async () => {
  const dockerfile = await Deno.readTextFile(new URL("../Dockerfile", import.meta.url));
  const stages = new Map(
    dockerfile.split(/^(?=FROM )/m).map((stage) => [/^FROM \S+ AS (\S+)/.exec(stage)?.[1], stage]),
  );
  const gateway = stages.get("gateway") ?? "";
  const preload = /^ENV LD_PRELOAD=(\S+)$/m.exec(gateway)?.[1];
  assert.ok(preload, "the gateway's stage sets LD_PRELOAD");
  // The stage every image starts from installs the package and links it where the gateway looks.
  const linked = (stages.get("deps") ?? "").split("\n").find((line) =>
    line.includes("libjemalloc.so.2") && line.trimEnd().endsWith(` ${preload}`)
  );
  assert.ok(linked, `deps links jemalloc to ${preload}`);
  assert.match(stages.get("deps") ?? "", /apt-get install -y --no-install-recommends libjemalloc2/);
  assert.equal(/^ENV MALLOC_CONF=(\S+)$/m.exec(gateway)?.[1], GATEWAY_MALLOC_CONF);
  // Set after the stage's last build step, so nothing is built under it.
  assert.ok(gateway.lastIndexOf("\nRUN ") < gateway.indexOf("ENV LD_PRELOAD"));
  for (const [name, stage] of stages) {
    if (name !== "gateway") {
      assert.doesNotMatch(stage, /^ENV (LD_PRELOAD|MALLOC_CONF)/m, String(name));
    }
  }
});
