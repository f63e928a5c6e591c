/** The edge part's report: the shape of bench-results/edge.json and its table. */
import { ATTACK_KINDS, type AttackKind, type KindCounters } from "../bench_edge_attackers.ts";
import type { RequestPhase } from "./edge_requests.ts";
import { formatGoal, formatGoalValue, type Goal, metText } from "./goals.ts";

export interface HeldFigures {
  target: number;
  mean: number;
  least: number;
}

export interface EdgeReport {
  date: string;
  gateway: {
    /** Every pid the gateway had during the part: more than one means it was restarted. */
    pids: number[];
    /** Soft "Max open files" of the gateway process. */
    openFileLimit: number | null;
    /** Its start-up lines about listening, descriptors and connections, as logged. */
    startupLog: Record<string, unknown>[];
    /** Launcher lines about the gateway during the part (restarts). */
    launcherLines: string[];
    descriptorsMaxDuringAttack: number | null;
    /** Its log lines from the first attacking connection to the recovery check, by message. */
    logDuringAttack: { level: string; msg: string; lines: number; suppressed: number }[];
  };
  attack: {
    addresses: string;
    targets: Record<AttackKind, number>;
    openPerSecond: number;
    replacePerSecond: number;
    /** From the first connection to the start of the measurement. */
    buildUpS: number;
    /** When every kind first held its target at once; null if it never did. */
    fullStrengthAfterS: number | null;
    /**
     * Connects tried per second over the whole attack, and how long the server kept one it
     * closed, on average: the replacement rate times that lifetime bounds what can be held at
     * once, whatever the target.
     */
    triedPerSecond: number;
    meanLifetimeS: number | null;
    heldDuringMeasurement: Record<AttackKind, HeldFigures>;
    /** Over the whole attack. */
    byKind: Record<
      AttackKind,
      Omit<KindCounters, "open" | "connecting"> & { meanLifetimeS: number | null }
    >;
    benchDescriptors: { limit: number | null; inUseBefore: number; attackNeeds: number };
  };
  victim: { baseline: RequestPhase; underAttack: RequestPhase; tenSecondsAfter: RequestPhase };
  attackerAddresses: RequestPhase;
  /** What the gateway's memory map showed it allocating with (shared/allocator.ts). */
  allocator: "jemalloc" | "glibc" | null;
  rssMb: {
    before: number | null;
    maxDuringAttack: number | null;
    samplesDuringAttack: number;
    tenSecondsAfter: number | null;
  };
  goals: Goal[];
}

/** The gateway's RSS during the attack over what it held before, per connection held. */
function perConnectionKb(report: EdgeReport): string {
  const { before, maxDuringAttack } = report.rssMb;
  const held = Object.values(report.attack.heldDuringMeasurement)
    .reduce((sum, figures) => sum + figures.mean, 0);
  if (before === null || maxDuringAttack === null || held === 0) return "–";
  return ((maxDuringAttack - before) * 1024 / held).toFixed(1);
}

const KIND_LABEL: Record<AttackKind, string> = {
  idle: "idle",
  slowloris: "slowloris heads",
  slowBody: "slow bodies",
};

const counts = (record: Record<string, number>): string =>
  Object.entries(record).sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ×${n}`).join(", ") ||
  "–";

/** The edge part's table of `deno task bench`. */
export function formatEdgeReport(report: EdgeReport, writtenTo: string): string {
  const { attack, gateway, rssMb } = report;
  const mb = (n: number | null): string => n === null ? "–" : n.toFixed(1);
  const ms = (n: number): string => (Number.isFinite(n) ? n.toFixed(1) : "–").padStart(9);
  const phaseRow = (p: RequestPhase): string =>
    `${p.label.padEnd(58)}${`${p.servedPercent.toFixed(1)} %`.padStart(9)}${ms(p.latency.p50Ms)}${
      ms(p.latency.p99Ms)
    }${ms(p.latency.maxMs)}${ms(p.p99AllMs ?? NaN)}${`${p.sent}/${p.requests}`.padStart(11)}`;
  const emfile = ATTACK_KINDS.reduce(
    (n, kind) => n + (attack.byKind[kind].connectErrors.EMFILE ?? 0),
    0,
  );
  const lines = [
    "",
    `Edge under a connection flood from ${attack.addresses} (opened at ≤ ${attack.openPerSecond}/s, ` +
    `replaced at ≤ ${attack.replacePerSecond}/s)`,
    "",
    `gateway: pid ${gateway.pids.join(", ") || "–"}${
      gateway.pids.length > 1 ? " (restarted)" : ""
    }, Max open files ${gateway.openFileLimit ?? "–"}, descriptors held at most during the ` +
    `attack ${gateway.descriptorsMaxDuringAttack ?? "–"}`,
    ...(gateway.startupLog.length
      ? gateway.startupLog.map((fields) => `  at start: ${JSON.stringify(fields)}`)
      : ["  at start: no `listening` line (LOG_LEVEL=warn) and no warning about connections"]),
    ...gateway.launcherLines.map((line) => `  launcher: ${line}`),
    attack.fullStrengthAfterS === null
      ? `attack: never held every target at once; measured after ${attack.buildUpS.toFixed(0)} s`
      : `attack: every target held after ${attack.fullStrengthAfterS.toFixed(1)} s`,
    `  ${attack.triedPerSecond.toFixed(0)} connects/s on average; the server closed one after ${
      attack.meanLifetimeS === null ? "–" : `${attack.meanLifetimeS.toFixed(1)} s`
    } on average${
      attack.meanLifetimeS === null
        ? ""
        : `, so replacing ≤ ${attack.replacePerSecond}/s holds ≤ ${
          (attack.replacePerSecond * attack.meanLifetimeS).toFixed(0)
        } at once`
    }`,
    ...(emfile > 0
      ? [
        `  THIS PROCESS RAN OUT OF DESCRIPTORS (EMFILE ×${emfile}): the attack was smaller ` +
        "than planned",
      ]
      : []),
    `${"".padEnd(18)}${"target".padStart(8)}${"held mean".padStart(11)}${"least".padStart(8)}${
      "opened".padStart(9)
    }${"closed by server (mean life; first answer)".padStart(44)}`,
    ...ATTACK_KINDS.map((kind) => {
      const held = attack.heldDuringMeasurement[kind];
      const c = attack.byKind[kind];
      const life = c.meanLifetimeS === null ? "" : `${c.meanLifetimeS.toFixed(1)} s; `;
      return `${KIND_LABEL[kind].padEnd(18)}${String(held.target).padStart(8)}${
        held.mean.toFixed(0).padStart(11)
      }${String(held.least).padStart(8)}${
        String(c.opened).padStart(9)
      }    ${c.closedByServer} (${life}${counts(c.answeredBeforeClose)})` +
        (c.failedToConnect
          ? `; failed to connect ${c.failedToConnect}: ${counts(c.connectErrors)}`
          : "");
    }),
    "",
    `${"".padEnd(58)}${"200".padStart(9)}${"of the 200 answers, ms".padStart(27)}${
      "p99 all".padStart(9)
    }`,
    `${"".padEnd(58)}${"".padStart(9)}${"p50".padStart(9)}${"p99".padStart(9)}${"max".padStart(9)}${
      "ms".padStart(9)
    }${"sent".padStart(11)}`,
    phaseRow(report.victim.baseline),
    phaseRow(report.victim.underAttack),
    phaseRow(report.attackerAddresses),
    phaseRow(report.victim.tenSecondsAfter),
    `outcomes under attack: ${counts(report.victim.underAttack.outcomes)}`,
    `  from the attackers' addresses: ${counts(report.attackerAddresses.outcomes)}`,
    `gateway RSS MB: ${mb(rssMb.before)} before, ${mb(rssMb.maxDuringAttack)} at most during ` +
    `(${rssMb.samplesDuringAttack} samples), ${mb(rssMb.tenSecondsAfter)} 10 s after; ` +
    `allocator ${report.allocator ?? "unknown"}`,
    `  per connection held: ${perConnectionKb(report)} KB at most (the most RSS during the ` +
    "attack over what it held on average; gateway/edge/capacity.ts budgets 12 KB)",
    `gateway log during the attack: ${
      gateway.logDuringAttack.slice(0, 6).map((l) =>
        `${l.level} "${l.msg}" ×${l.lines}${l.suppressed ? ` (+${l.suppressed} left out)` : ""}`
      ).join("; ") || "nothing"
    }`,
    "",
    `${"goal".padEnd(58)}${"figure".padStart(10)}${"goal".padStart(12)}`,
    ...report.goals.map((g) =>
      `${g.figure.padEnd(58)}${formatGoalValue(g).padStart(10)}${formatGoal(g).padStart(12)}  ${
        metText(g.met)
      }`
    ),
    "(p99 all: a request not answered 200 counts as never answered; – once over 1 % were not)",
    `Figures written to ${writtenTo}`,
  ];
  return lines.join("\n");
}
