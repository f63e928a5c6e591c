/**
 * Reading what a process logged while a bench ran: a file's size before, what was written after
 * that offset, and the JSON lines of it (the product logs one JSON object a line).
 */

/** The file's size in bytes; 0 when it does not exist (yet). */
export async function fileSize(path: string): Promise<number> {
  return (await Deno.stat(path).catch(() => null))?.size ?? 0;
}

/** What was written to the file past `offset`; "" when it does not exist. */
export async function readFrom(path: string, offset: number): Promise<string> {
  const bytes = await Deno.readFile(path).catch(() => new Uint8Array());
  return new TextDecoder().decode(bytes.subarray(offset));
}

/** The lines of `text` that are JSON objects, parsed; any other line is passed over. */
export function jsonLines(text: string): Record<string, unknown>[] {
  const lines: Record<string, unknown>[] = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith("{")) continue; // the runtime's own lines (warnings, panics) are text
    try {
      lines.push(JSON.parse(line));
    } catch { /* a line cut by the read */ }
  }
  return lines;
}
