/**
 * A real SMTP server for tests (the `smtp-server` package) on a free loopback port, keeping what
 * it receives, and readers for what it received: headers, and each MIME part decoded.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import type { AddressInfo } from "node:net";
// @ts-types="@types/smtp-server"
import { SMTPServer, type SMTPServerOptions } from "smtp-server";

export interface Received {
  from: string;
  to: string[];
  raw: string;
  /** When the message was accepted (Date.now()). */
  receivedAt: number;
}

/** A real SMTP server on a free loopback port, keeping what it receives. */
export async function smtpServer(options: Partial<SMTPServerOptions> = {}): Promise<{
  port: number;
  received: Received[];
  connections: () => number;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}> {
  const received: Received[] = [];
  let connections = 0;
  const server = new SMTPServer({
    authOptional: true,
    // Plain loopback: no self-signed STARTTLS for the client to distrust.
    disabledCommands: ["STARTTLS"],
    // A reverse DNS lookup per connection would be timed as the product's (it has no DNS here).
    disableReverseLookup: true,
    logger: false,
    onConnect(_session, callback) {
      connections++;
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString("utf8"),
          receivedAt: Date.now(),
        });
        callback();
      });
    },
    ...options,
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.server.address() as AddressInfo).port;
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return { port, received, connections: () => connections, close, [Symbol.asyncDispose]: close };
}

/** The decoded text of each part of a multipart message, by content type. */
export function parts(raw: string): Record<string, string> {
  const boundary = /boundary="?([^";\r\n]+)"?/.exec(raw)?.[1];
  assert(boundary, `a multipart message: ${raw}`);
  const found: Record<string, string> = {};
  for (const part of raw.split(`--${boundary}`).slice(1, -1)) {
    const [head, ...rest] = part.split("\r\n\r\n");
    const body = rest.join("\r\n\r\n");
    const type = /content-type:\s*([^;\r\n]+)/i.exec(head!)?.[1]?.trim().toLowerCase() ?? "";
    const encoding = /content-transfer-encoding:\s*(\S+)/i.exec(head!)?.[1]?.toLowerCase();
    found[type] = encoding === "base64"
      ? Buffer.from(body, "base64").toString("utf8")
      : encoding === "quoted-printable"
      ? Buffer.from(
        body.replace(/=\r\n/g, "").replace(
          /=([0-9A-F]{2})/g,
          (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)),
        ),
        "latin1",
      ).toString("utf8")
      : body;
  }
  return found;
}

export function header(raw: string, name: string): string | undefined {
  const head = raw.split("\r\n\r\n")[0]!.replace(/\r\n[ \t]+/g, " ");
  return new RegExp(`^${name}:\\s*(.*)$`, "im").exec(head)?.[1];
}
