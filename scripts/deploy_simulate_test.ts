import assert from "node:assert/strict";
import { simulate } from "./deploy_simulate.ts";

// The short run of `deno task deploy:simulate`: every app under Deploy's Deno with only its README
// variables, two instances at most each, idle stops after 2 s, an eviction every 1.5 s (a third
// of them SIGKILL at once), a tick every 5 s; a few hundred writes. The full run is the task.
Deno.test({
  name: "on a Deploy-like platform, no event or mail is lost and every answer is documented",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const logDir = await Deno.makeTempDir({ prefix: "printshop-deploy-simulate-test-" });
    const report = await simulate({
      writes: 300,
      concurrency: 6,
      idleMs: 2_000,
      tickMs: 5_000,
      evictEveryMs: 1_500,
      hardKillShare: 0.34,
      drainTimeoutMs: 90_000,
      logDir,
    });
    console.log(report.text);
    assert.deepEqual(report.failures, [], `${report.text}\ninstance logs: ${logDir}`);
    assert.ok(report.figures.events >= 300, `${report.figures.events} events`);
    assert.equal(report.figures.delivered, report.figures.events);
    assert.ok(report.figures.evictions >= 3, `${report.figures.evictions} evictions`);
    await Deno.remove(logDir, { recursive: true });
  },
});
