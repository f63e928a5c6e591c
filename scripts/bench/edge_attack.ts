/**
 * The edge part's attack as this process sees it: the attackers' Worker
 * (scripts/bench_edge_attackers.ts) started, followed and stopped, and what is sampled while it
 * runs (the gateway's RSS and descriptors, what the attack holds).
 */
import {
  ATTACK_KINDS,
  type AttackerCommand,
  type AttackerEvent,
  type AttackerStats,
  type AttackKind,
  type AttackPlan,
} from "../bench_edge_attackers.ts";
import { descriptorCount, gatewayPid, rssMb } from "./proc.ts";
import type { BenchStack } from "./stack.ts";

export const SAMPLE_EVERY_MS = 250;
/** Listing /proc/<pid>/fd with thousands of entries costs more than reading VmRSS: every 4th. */
const DESCRIPTORS_EVERY_SAMPLES = 4;

export interface Attackers {
  latest(): AttackerStats | null;
  /** Why the worker failed, if it did. */
  failure(): string | null;
  /** Closes every attacking socket and ends the worker; the final counters. */
  stop(): Promise<AttackerStats | null>;
  /** Ends the worker at once (its sockets close with it). */
  terminate(): void;
}

export function startAttackers(plan: AttackPlan): Attackers {
  const worker = new Worker(new URL("../bench_edge_attackers.ts", import.meta.url), {
    type: "module",
  });
  let latest: AttackerStats | null = null;
  let failure: string | null = null;
  let stopped: ((stats: AttackerStats | null) => void) | null = null;
  let terminated = false;
  worker.onmessage = (event: MessageEvent<AttackerEvent>) => {
    const message = event.data;
    if (message.type === "stats") latest = message.stats;
    else if (message.type === "stopped") {
      latest = message.stats;
      stopped?.(message.stats);
    } else {
      failure = message.message;
      stopped?.(null);
    }
  };
  worker.onerror = (event) => {
    // Handled here, so that the part reports it and cleans up instead of the process dying.
    event.preventDefault();
    failure = event.message;
    stopped?.(null);
  };
  const send = (command: AttackerCommand): void => worker.postMessage(command);
  send({ type: "start", plan });
  const terminate = (): void => {
    if (terminated) return;
    terminated = true;
    worker.terminate();
  };
  return {
    latest: () => latest,
    failure: () => failure,
    async stop() {
      if (terminated) return latest;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const final = await Promise.race([
        new Promise<AttackerStats | null>((resolve) => {
          stopped = resolve;
          send({ type: "stop" });
        }),
        new Promise<null>((resolve) => timer = setTimeout(() => resolve(null), 5_000)),
      ]);
      clearTimeout(timer);
      terminate();
      return final ?? latest;
    },
    terminate,
  };
}

/** Every 250 ms: the gateway's RSS, every second its descriptors, and what the attack holds. */
export function startSampling(bench: Pick<BenchStack, "stack">, attackers: Attackers): {
  pids: Set<number>;
  rss: number[];
  descriptorsMax: number | null;
  held: Record<AttackKind, number[]>;
  /** From now on, what the attack holds is recorded (the measurement's window). */
  measure(on: boolean): void;
  stop(): void;
} {
  const state = {
    pids: new Set<number>(),
    rss: [] as number[],
    descriptorsMax: null as number | null,
    held: { idle: [], slowloris: [], slowBody: [] } as Record<AttackKind, number[]>,
    measuring: false,
  };
  let busy = false;
  let tick = 0;
  const timer = setInterval(async () => {
    if (busy) return; // a slow /proc read: skip a beat rather than pile reads up
    busy = true;
    try {
      const pid = gatewayPid(bench);
      if (pid !== null) state.pids.add(pid);
      const mb = await rssMb(pid);
      if (mb !== null) state.rss.push(mb);
      if (tick++ % DESCRIPTORS_EVERY_SAMPLES === 0) {
        const fds = await descriptorCount(pid);
        if (fds !== null) state.descriptorsMax = Math.max(state.descriptorsMax ?? 0, fds);
      }
      const stats = attackers.latest();
      if (state.measuring && stats) {
        for (const kind of ATTACK_KINDS) state.held[kind].push(stats.kinds[kind].open);
      }
    } finally {
      busy = false;
    }
  }, SAMPLE_EVERY_MS);
  return {
    get pids() {
      return state.pids;
    },
    get rss() {
      return state.rss;
    },
    get descriptorsMax() {
      return state.descriptorsMax;
    },
    get held() {
      return state.held;
    },
    measure(on) {
      state.measuring = on;
    },
    stop() {
      clearInterval(timer);
    },
  };
}
