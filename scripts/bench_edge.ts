/**
 * The connection-flood part of `deno task bench`: what the gateway's public port (its edge) does
 * for ordinary clients while others hold it down. scripts/bench.ts runs it last on its stack;
 * `deno run -A scripts/bench_edge.ts` runs it alone on a stack of its own (scripts/bench/stack.ts).
 *
 * The attackers (scripts/bench_edge_attackers.ts, a Worker of this process) bind their sockets
 * to 127.0.0.2–127.0.0.20 with node:net's `localAddress` (`Deno.connect` cannot choose a source
 * address) and, together, hold 10,000 idle connections (connected, nothing sent), 500 slowloris
 * heads (a head that never ends, a byte a second) and 500 slow bodies (the complete head of a
 * `POST /v1/quotes` with the key and `Content-Length: 100000`, then a byte a second). One the
 * server closes or refuses is replaced after a short pause. First connections are opened at
 * `BENCH_EDGE_OPEN_RATE` (500) a second at most, so the build-up measures the edge rather than
 * the kernel's accept backlog; the time until every kind held its target is reported (or that
 * it never did, and the most it held). Replacements leave at `BENCH_EDGE_REPLACE_RATE` (2,500)
 * a second at most: enough to hold 10,000 idle connections against an edge that drops them after
 * 5 s (2,000 a second), bounded so that an edge that closes each at once meets a steady stream
 * rather than a storm of this process's making. The table prints the rate reached and how long
 * the server kept a connection, whose product bounds what can be held at once.
 *
 * Measured, each figure beside the goal as met or not met:
 * 1. `GET /v1/me` with the key from 127.0.0.1, 1,000 times, 4 at a time, each on a fresh
 *    connection (node:http with `agent: false`), 10 s allowed each: first with no attack (the
 *    baseline, after 50 untimed), then once the attack is at full strength. The share answered
 *    200 (goal 100 %) and the p99 against the baseline's (goal ≤ 3×), a request not answered
 *    200 counting as never answered (so with over 1 % of them, the goal is not met); the table
 *    also shows p50 and p99 of the 200 answers alone.
 * 2. During the attack, 200 of the same on fresh connections from the attackers' own addresses
 *    (127.0.0.2–20 round-robin): the share answered 200 (goal ≥ 95 %).
 * 3. The gateway process's RSS (VmRSS of /proc/<pid>/status, the pid from the stack's processes;
 *    the table says whether its memory map holds jemalloc, shared/allocator.ts):
 *    after the baseline, every 250 ms from the first attacking connection until the attackers let
 *    go (the most, goal ≤ 250 MB), and 10 s after they let go (goal within 20 % of before: at most
 *    1.2× before; less is fine).
 * Beside them, for reading the figures: the gateway's descriptor limit (its /proc/<pid>/limits)
 * and the descriptors it held at most (every second), its start-up lines that say how many
 * connections it takes (the `listening` line, which LOG_LEVEL=warn leaves out, else warnings
 * about descriptors or connections), what it logged during the attack, how many of each kind
 * the attack held during the measurement (mean and least, every 250 ms: connected, the kernel's
 * handshake done, and not yet closed, whether the edge has accepted it or it waits in the
 * backlog), what the server did to the attackers (closed after how long, with which answer;
 * refused), and 50 requests 10 s after the attack.
 *
 * Sizes, for a shorter run: `BENCH_EDGE_IDLE` (10000), `BENCH_EDGE_SLOWLORIS` (500),
 * `BENCH_EDGE_SLOW_BODIES` (500), `BENCH_EDGE_REQUESTS` (1000), `BENCH_EDGE_OWN_REQUESTS` (200),
 * `BENCH_EDGE_OPEN_RATE` (500 first connections/s), `BENCH_EDGE_REPLACE_RATE` (2500
 * replacements/s), `BENCH_EDGE_DEADLINE_S` (900: past it the whole part fails, its sockets
 * closed). This process holds the attack's sockets itself and raises no limit: when they would
 * not fit under its own `ulimit -n`, the part says so before attacking; a connect that fails for
 * want of descriptors (EMFILE) is counted and reported.
 *
 * Nothing here sets the gateway's connection cap or descriptor budget (no MAX_CONNECTIONS, no
 * OPEN_FILE_LIMIT): it runs with the launcher's flags and inherits this process's descriptor
 * limit, and the figures are whatever its edge makes of that. Figures in
 * bench-results/edge.json.
 *
 * This file runs the part; its pieces are in scripts/bench/: the requests (edge_requests.ts),
 * the attackers' Worker seen from here and the sampling during the attack (edge_attack.ts), the
 * gateway's log (edge_log.ts) and the report and its table (edge_report.ts).
 */
import { ATTACK_KINDS, type AttackKind } from "./bench_edge_attackers.ts";
import {
  type Attackers,
  SAMPLE_EVERY_MS,
  startAttackers,
  startSampling,
} from "./bench/edge_attack.ts";
import { logSummary, startupLines } from "./bench/edge_log.ts";
import { type EdgeReport, formatEdgeReport, type HeldFigures } from "./bench/edge_report.ts";
import { CONCURRENCY, PATH, type RequestPhase, requestPhase } from "./bench/edge_requests.ts";
import { absoluteGoal, type Goal, goal } from "./bench/goals.ts";
import { fileSize, readFrom } from "./bench/log_files.ts";
import { allocatorOf, descriptorCount, gatewayPid, openFileLimit, rssMb } from "./bench/proc.ts";
import { writeResults } from "./bench/results.ts";
import { benchOrganization, type BenchStack, startBenchStack } from "./bench/stack.ts";

function wholeNumberEnv(name: string, fallback: number, least: number): number {
  const raw = Deno.env.get(name);
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < least) {
    throw new Error(`${name} must be a whole number ≥ ${least}, not ${raw}`);
  }
  return value;
}

/** How big the attack and the measurements are (see the header for each variable). */
export const EDGE_BENCH_SIZES = {
  targets: {
    idle: wholeNumberEnv("BENCH_EDGE_IDLE", 10_000, 0),
    slowloris: wholeNumberEnv("BENCH_EDGE_SLOWLORIS", 500, 0),
    slowBody: wholeNumberEnv("BENCH_EDGE_SLOW_BODIES", 500, 0),
  } satisfies Record<AttackKind, number>,
  requests: wholeNumberEnv("BENCH_EDGE_REQUESTS", 1_000, 1),
  ownAddressRequests: wholeNumberEnv("BENCH_EDGE_OWN_REQUESTS", 200, 1),
  openPerSecond: wholeNumberEnv("BENCH_EDGE_OPEN_RATE", 500, 1),
  replacePerSecond: wholeNumberEnv("BENCH_EDGE_REPLACE_RATE", 2_500, 1),
  deadlineS: wholeNumberEnv("BENCH_EDGE_DEADLINE_S", 900, 1),
};

const VICTIM_ADDRESS = "127.0.0.1";
const ATTACK_ADDRESSES = Array.from({ length: 19 }, (_, i) => `127.0.0.${i + 2}`);
const WARMUP_REQUESTS = 50;
const RECOVERY_REQUESTS = 50;
/**
 * No new request leaves after this long in one phase: a thousand requests that each wait out
 * their 10 s would otherwise take 40 minutes. Those never sent count as not served.
 */
const VICTIM_BUDGET_MS = 120_000;
const OWN_ADDRESS_BUDGET_MS = 60_000;
const CONNECT_TIMEOUT_MS = 10_000;
const WORKER_START_MS = 30_000;
const REPLACE_PAUSE_MS = 200;
const AFTER_ATTACK_MS = 10_000;
/** Besides the attack's own sockets: the victims' and this process's other descriptors. */
const DESCRIPTOR_MARGIN = 256;

const GOALS = {
  victimServedPercentAtLeast: 100,
  p99RatioAtMost: 3,
  attackerAddressesServedPercentAtLeast: 95,
  rssDuringAttackMbAtMost: 250,
  rssAfterRatioAtMost: 1.2,
};

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });

interface Progress {
  phase: string;
  attackers: Attackers | null;
  sampling: ReturnType<typeof startSampling> | null;
}

/**
 * The part, within `BENCH_EDGE_DEADLINE_S`: past it, the part fails naming the step it was in,
 * whatever it was waiting on (an admin call without a timeout, say), and its sockets are closed.
 */
export async function runEdgeBench(
  bench: Pick<BenchStack, "stack" | "adminToken" | "logDir">,
): Promise<EdgeReport> {
  const { deadlineS } = EDGE_BENCH_SIZES;
  const deadline = new AbortController();
  const progress: Progress = { phase: "set-up", attackers: null, sampling: null };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const overdue = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new Error(`edge bench: past its ${deadlineS} s deadline (${progress.phase})`);
      deadline.abort(error);
      reject(error);
    }, deadlineS * 1000);
  });
  try {
    return await Promise.race([measure(bench, deadline.signal, progress), overdue]);
  } finally {
    clearTimeout(timer);
    progress.sampling?.stop();
    progress.attackers?.terminate();
  }
}

async function measure(
  bench: Pick<BenchStack, "stack" | "adminToken" | "logDir">,
  signal: AbortSignal,
  progress: Progress,
): Promise<EdgeReport> {
  const sizes = EDGE_BENCH_SIZES;
  const { stack } = bench;
  const gatewayUrl = new URL(stack.gatewayUrl);
  const gatewayLog = `${bench.logDir}/gateway.log`;
  const launcherLog = `${bench.logDir}/launcher.log`;
  // This process holds every attacking socket; it raises no limit, so they must fit under it.
  const total = Object.values(sizes.targets).reduce((a, b) => a + b, 0);
  const attackNeeds = total + 2 * CONCURRENCY;
  const benchDescriptors = {
    limit: await openFileLimit("self"),
    inUseBefore: (await descriptorCount("self")) ?? 0,
    attackNeeds,
  };
  if (
    benchDescriptors.limit !== null &&
    benchDescriptors.inUseBefore + attackNeeds + DESCRIPTOR_MARGIN > benchDescriptors.limit
  ) {
    throw new Error(
      `edge bench: the attack needs ${attackNeeds} sockets besides the ` +
        `${benchDescriptors.inUseBefore} descriptors this process has open (and a margin of ` +
        `${DESCRIPTOR_MARGIN}), over its limit of ${benchDescriptors.limit} (ulimit -n); ` +
        "lower BENCH_EDGE_IDLE or raise ulimit -n before the run",
    );
  }

  const { apiKey } = await benchOrganization(
    { adminUrl: stack.adminUrl, adminToken: bench.adminToken },
    "Edge bench shop",
  );
  const target = { host: gatewayUrl.hostname, port: Number(gatewayUrl.port), apiKey };
  const gatewayLimit = await openFileLimit(gatewayPid(bench));
  const startupLog = startupLines(await readFrom(gatewayLog, 0));
  const fromVictim = (): string => VICTIM_ADDRESS;
  const fromAttackers = (i: number): string => ATTACK_ADDRESSES[i % ATTACK_ADDRESSES.length]!;

  progress.phase = "baseline";
  console.error(
    `[bench] edge: ${sizes.requests} GET ${PATH} from ${VICTIM_ADDRESS}, no attack…`,
  );
  /** A batch of requests from the victim's address, within the victims' time budget. */
  const victimPhase = (label: string, count: number): Promise<RequestPhase> =>
    requestPhase(label, target, count, fromVictim, VICTIM_BUDGET_MS, signal);
  await victimPhase("warm-up", WARMUP_REQUESTS);
  const baseline = await victimPhase(
    `GET ${PATH} from ${VICTIM_ADDRESS}, no attack`,
    sizes.requests,
  );
  const rssBefore = await rssMb(gatewayPid(bench));

  progress.phase = "build-up";
  const buildUpCapMs = (total / sizes.openPerSecond) * 1500 + 15_000;
  console.error(
    `[bench] edge: opening ${sizes.targets.idle} idle, ${sizes.targets.slowloris} slowloris, ` +
      `${sizes.targets.slowBody} slow-body connections from ${ATTACK_ADDRESSES[0]}–` +
      `${ATTACK_ADDRESSES.at(-1)} at ≤ ${sizes.openPerSecond}/s, replaced at ≤ ` +
      `${sizes.replacePerSecond}/s (waiting ≤ ` +
      `${(buildUpCapMs / 1000).toFixed(0)} s for all of them)…`,
  );
  const logFrom = await fileSize(gatewayLog);
  const launcherFrom = await fileSize(launcherLog);
  const launchedAt = Date.now();
  const attackers = startAttackers({
    host: target.host,
    port: target.port,
    apiKey,
    targets: sizes.targets,
    addresses: ATTACK_ADDRESSES,
    openPerSecond: sizes.openPerSecond,
    replacePerSecond: sizes.replacePerSecond,
    replacePauseMs: REPLACE_PAUSE_MS,
    connectTimeoutMs: CONNECT_TIMEOUT_MS,
  });
  progress.attackers = attackers;
  const sampling = startSampling(bench, attackers);
  progress.sampling = sampling;
  // Timed from the worker's first connection, not from its creation: loading its module takes
  // a moment that is no part of the build-up.
  let attackStart: number | null = null;
  for (;;) {
    await sleep(SAMPLE_EVERY_MS, signal);
    const failure = attackers.failure();
    if (failure !== null) throw new Error(`edge bench: the attackers failed: ${failure}`);
    const stats = attackers.latest();
    attackStart = stats?.startedAt ?? null;
    if (attackStart === null) {
      if (Date.now() - launchedAt > WORKER_START_MS) {
        throw new Error(`edge bench: the attackers' worker did not start in ${WORKER_START_MS} ms`);
      }
      continue;
    }
    if (stats?.fullStrengthAt != null || Date.now() - attackStart > buildUpCapMs) break;
  }
  const buildUpS = (Date.now() - attackStart) / 1000;
  const fullAt = attackers.latest()?.fullStrengthAt ?? null;
  console.error(
    fullAt === null
      ? `[bench] edge: not at full strength after ${buildUpS.toFixed(0)} s; measuring anyway`
      : `[bench] edge: at full strength after ${((fullAt - attackStart) / 1000).toFixed(1)} s`,
  );

  progress.phase = "under attack";
  sampling.measure(true);
  console.error(`[bench] edge: ${sizes.requests} GET ${PATH} under attack…`);
  const underAttack = await victimPhase(
    `GET ${PATH} from ${VICTIM_ADDRESS}, under attack`,
    sizes.requests,
  );
  console.error(
    `[bench] edge: ${sizes.ownAddressRequests} from the attackers' addresses, under attack…`,
  );
  const attackerAddresses = await requestPhase(
    `GET ${PATH} from ${ATTACK_ADDRESSES[0]}–${ATTACK_ADDRESSES.at(-1)}, under attack`,
    target,
    sizes.ownAddressRequests,
    fromAttackers,
    OWN_ADDRESS_BUDGET_MS,
    signal,
  );
  sampling.measure(false);
  const failure = attackers.failure();
  if (failure !== null) throw new Error(`edge bench: the attackers failed: ${failure}`);

  progress.phase = "after the attack";
  const final = await attackers.stop();
  sampling.stop();
  const rssDuring = sampling.rss;
  console.error(`[bench] edge: attackers gone; the gateway's RSS in 10 s…`);
  await sleep(AFTER_ATTACK_MS, signal);
  const rssAfter = await rssMb(gatewayPid(bench));
  const tenSecondsAfter = await victimPhase(
    `GET ${PATH} from ${VICTIM_ADDRESS}, 10 s after the attack`,
    RECOVERY_REQUESTS,
  );
  const pid = gatewayPid(bench);
  if (pid !== null) sampling.pids.add(pid);

  const held = Object.fromEntries(ATTACK_KINDS.map((kind) => {
    const samples = sampling.held[kind];
    return [kind, {
      target: sizes.targets[kind],
      mean: samples.length ? samples.reduce((a, b) => a + b, 0) / samples.length : 0,
      least: samples.length ? Math.min(...samples) : 0,
    }];
  })) as Record<AttackKind, HeldFigures>;
  const byKind = Object.fromEntries(ATTACK_KINDS.map((kind) => {
    const counters = final?.kinds[kind];
    if (!counters) throw new Error("edge bench: the attackers never reported");
    // What was open when they let go is 0 by then; the held figures above say what was.
    const { open: _open, connecting: _connecting, ...totals } = counters;
    return [kind, {
      ...totals,
      meanLifetimeS: counters.closedByServer
        ? counters.lifetimeMsSum / counters.closedByServer / 1000
        : null,
    }];
  })) as EdgeReport["attack"]["byKind"];
  const closedByServer = ATTACK_KINDS.reduce((n, k) => n + byKind[k].closedByServer, 0);
  const rssMax = rssDuring.length ? Math.max(...rssDuring) : null;
  const goals: Goal[] = [
    absoluteGoal(
      `GET ${PATH} from ${VICTIM_ADDRESS} under attack, answered 200`,
      underAttack.servedPercent,
      "%",
      "≥",
      GOALS.victimServedPercentAtLeast,
    ),
    goal(
      `GET ${PATH} from ${VICTIM_ADDRESS}: p99 under attack ÷ no attack`,
      underAttack.p99AllMs ?? Infinity,
      baseline.p99AllMs ?? Infinity,
      "≤",
      GOALS.p99RatioAtMost,
    ),
    absoluteGoal(
      `GET ${PATH} from the attackers' addresses, answered 200`,
      attackerAddresses.servedPercent,
      "%",
      "≥",
      GOALS.attackerAddressesServedPercentAtLeast,
    ),
    absoluteGoal(
      "gateway RSS, most during the attack",
      rssMax ?? NaN,
      "MB",
      "≤",
      GOALS.rssDuringAttackMbAtMost,
    ),
    goal(
      "gateway RSS 10 s after the attack ÷ before it",
      rssAfter ?? NaN,
      rssBefore ?? NaN,
      "≤",
      GOALS.rssAfterRatioAtMost,
    ),
  ];
  return {
    date: new Date().toISOString(),
    gateway: {
      pids: [...sampling.pids],
      openFileLimit: gatewayLimit,
      startupLog,
      launcherLines: (await readFrom(launcherLog, launcherFrom)).split("\n")
        .filter((line) => line.includes("gateway")),
      descriptorsMaxDuringAttack: sampling.descriptorsMax,
      logDuringAttack: logSummary(await readFrom(gatewayLog, logFrom)),
    },
    attack: {
      addresses: `${ATTACK_ADDRESSES[0]}–${ATTACK_ADDRESSES.at(-1)}`,
      targets: sizes.targets,
      openPerSecond: sizes.openPerSecond,
      replacePerSecond: sizes.replacePerSecond,
      buildUpS,
      fullStrengthAfterS: fullAt === null ? null : (fullAt - attackStart) / 1000,
      triedPerSecond: final
        ? ATTACK_KINDS.reduce(
          (n, k) => n + final.kinds[k].opened + final.kinds[k].failedToConnect,
          0,
        ) /
          ((final.at - final.startedAt) / 1000)
        : 0,
      meanLifetimeS: closedByServer
        ? ATTACK_KINDS.reduce((n, k) => n + byKind[k].lifetimeMsSum, 0) / closedByServer / 1000
        : null,
      heldDuringMeasurement: held,
      byKind,
      benchDescriptors,
    },
    victim: { baseline, underAttack, tenSecondsAfter },
    attackerAddresses,
    allocator: await allocatorOf(gatewayPid(bench)),
    rssMb: {
      before: rssBefore,
      maxDuringAttack: rssMax,
      samplesDuringAttack: rssDuring.length,
      tenSecondsAfter: rssAfter,
    },
    goals,
  };
}

if (import.meta.main) {
  const bench = await startBenchStack("printshop-bench-edge-");
  try {
    const report = await runEdgeBench(bench);
    await writeResults("bench-results/edge.json", report);
    console.log(formatEdgeReport(report, "bench-results/edge.json"));
  } finally {
    await bench.stop();
  }
}
