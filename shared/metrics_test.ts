import { deepStrictEqual as assertEquals } from "node:assert/strict";
import type { ObservableCallback, ObservableGauge, ObservableResult } from "@opentelemetry/api";
import { type Sample, sampleInto } from "./metrics.ts";

/** A gauge that keeps its callbacks, collected by hand as an SDK would at each export. */
function handGauge(): { gauge: ObservableGauge; collect(): Promise<[number, unknown][]> } {
  const callbacks = new Set<ObservableCallback>();
  const gauge = {
    addCallback: (callback: ObservableCallback) => void callbacks.add(callback),
    removeCallback: (callback: ObservableCallback) => void callbacks.delete(callback),
  } as ObservableGauge;
  return {
    gauge,
    async collect() {
      const seen: [number, unknown][] = [];
      const result = {
        observe: (value: number, attributes?: unknown) => void seen.push([value, attributes]),
      } as ObservableResult;
      for (const callback of callbacks) await callback(result);
      return seen;
    },
  };
}

Deno.test("sampleInto() reports the last sample while it takes the next, one at a time, until stopped", async () => {
  const { gauge, collect } = handGauge();
  let calls = 0;
  let release: (samples: Sample[]) => void = () => {};
  let fail = false;
  const stop = sampleInto(gauge, () => {
    calls++;
    if (fail) return Promise.reject(new Error("database away"));
    return new Promise<Sample[]>((resolve) => release = resolve);
  });
  // The first export has nothing yet; it starts the first sample.
  assertEquals(await collect(), []);
  assertEquals(calls, 1);
  // A second export while that sample runs starts no other.
  assertEquals(await collect(), []);
  assertEquals(calls, 1);
  release([{ value: 7, attributes: { status: "pending" } }]);
  await new Promise((resolve) => setTimeout(resolve, 0));
  assertEquals(await collect(), [[7, { status: "pending" }]]);
  assertEquals(calls, 2);
  // A sample that fails keeps the last figures.
  fail = true;
  release([{ value: 9, attributes: {} }]);
  await new Promise((resolve) => setTimeout(resolve, 0));
  assertEquals(await collect(), [[9, {}]]);
  await new Promise((resolve) => setTimeout(resolve, 0));
  assertEquals(await collect(), [[9, {}]]);
  stop();
  assertEquals(await collect(), []);
});
