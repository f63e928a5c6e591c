/** What the gateway logged, read for the edge part: its start-up lines and a summary by message. */
import type { EdgeReport } from "./edge_report.ts";
import { jsonLines } from "./log_files.ts";

/**
 * The gateway's start-up lines that say what it will hold: its `listening` line for the public
 * API (with the connection cap, when it logs one) and warnings about descriptors or connections.
 */
export function startupLines(log: string): Record<string, unknown>[] {
  return jsonLines(log)
    .filter((line) =>
      (line.msg === "listening" && line.api !== "admin") ||
      ((line.level === "warn" || line.level === "error") &&
        /descriptor|connection|open.?file/i.test(String(line.msg)))
    )
    .map(({ time: _time, service: _service, ...fields }) => fields);
}

/** Log lines by level and message, with the repeats a throttled warning left out. */
export function logSummary(log: string): EdgeReport["gateway"]["logDuringAttack"] {
  const byMessage = new Map<string, EdgeReport["gateway"]["logDuringAttack"][number]>();
  for (const line of jsonLines(log)) {
    const key = `${line.level} ${line.msg}`;
    const entry = byMessage.get(key) ??
      { level: String(line.level), msg: String(line.msg), lines: 0, suppressed: 0 };
    entry.lines++;
    if (typeof line.since_last_warning === "number") entry.suppressed += line.since_last_warning;
    byMessage.set(key, entry);
  }
  return [...byMessage.values()].sort((a, b) => b.lines - a.lines);
}
