import assert from "node:assert/strict";
import {
  allocatorLine,
  GATEWAY_MALLOC_CONF,
  gatewayAllocatorEnv,
  jemallocMissingMessage,
  jemallocPath,
} from "./allocator.ts";
import { RUN_FLAGS } from "./launcher.ts";
import { burst } from "./testing/burst.ts";

async function installedJemalloc(): Promise<string> {
  const path = await jemallocPath();
  assert.ok(path !== null, jemallocMissingMessage());
  return path;
}

Deno.test("on the gateway's allocator, a burst's freed pages go back without a trim", async () => {
  const env = gatewayAllocatorEnv(await installedJemalloc(), undefined);
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

Deno.test("the gateway preloads jemalloc with its settings, unless a preload is already set", async () => {
  const path = await installedJemalloc();
  assert.deepEqual(gatewayAllocatorEnv(path, undefined), {
    LD_PRELOAD: path,
    MALLOC_CONF: GATEWAY_MALLOC_CONF,
  });
  assert.deepEqual(gatewayAllocatorEnv(path, "/opt/profiler.so"), {});
  assert.deepEqual(gatewayAllocatorEnv(null, undefined), {});
  assert.match(allocatorLine(path, gatewayAllocatorEnv(path, undefined)), /runs on jemalloc \(/);
  assert.match(allocatorLine(null, {}), /libjemalloc2 is not installed/);
});

Deno.test("jemalloc accepts the gateway's settings as they are written", async () => {
  // jemalloc says "<jemalloc>: Invalid conf pair" on stderr for a setting it does not know, and
  // goes on with its defaults; Deno.Command's output would hide that.
  const env = gatewayAllocatorEnv(await installedJemalloc(), undefined);
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
  assert.match(gateway, new RegExp(`ln -s .*libjemalloc\\.so\\.2.* ${preload}$`, "m"));
  assert.equal(/^ENV MALLOC_CONF=(\S+)$/m.exec(gateway)?.[1], GATEWAY_MALLOC_CONF);
  for (const [name, stage] of stages) {
    if (name !== "gateway") assert.doesNotMatch(stage, /LD_PRELOAD|MALLOC_CONF/, String(name));
  }
});
