export type LogLevel = "debug" | "info" | "warn" | "error";

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export type LogFields = Record<string, unknown>;

/** Structured JSON logger: one object per line on stdout, fields merged from parents. */
export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
  /** Whether a line at `level` is written: for fields that cost something to build. */
  enabled(level: LogLevel): boolean;
}

export interface LoggerOptions {
  level: LogLevel;
  fields?: LogFields;
  write?: (line: string) => void;
}

const encoder = new TextEncoder();
const defaultWrite = (line: string): void => {
  Deno.stdout.writeSync(encoder.encode(line + "\n"));
};

export function createLogger(options: LoggerOptions): Logger {
  return new JsonLogger(RANK[options.level], options.fields ?? {}, options.write ?? defaultWrite);
}

/**
 * Methods on the prototype, not closures per logger: every request makes a child or two (its
 * request id, its organisation), and most of their lines are below the level anyway.
 */
class JsonLogger implements Logger {
  constructor(
    private readonly min: number,
    private readonly base: LogFields,
    private readonly write: (line: string) => void,
  ) {}

  debug(message: string, fields?: LogFields): void {
    if (RANK.debug >= this.min) this.#emit("debug", message, fields);
  }

  info(message: string, fields?: LogFields): void {
    if (RANK.info >= this.min) this.#emit("info", message, fields);
  }

  warn(message: string, fields?: LogFields): void {
    if (RANK.warn >= this.min) this.#emit("warn", message, fields);
  }

  error(message: string, fields?: LogFields): void {
    if (RANK.error >= this.min) this.#emit("error", message, fields);
  }

  child(fields: LogFields): Logger {
    return new JsonLogger(this.min, { ...this.base, ...fields }, this.write);
  }

  enabled(level: LogLevel): boolean {
    return RANK[level] >= this.min;
  }

  #emit(level: LogLevel, message: string, fields?: LogFields): void {
    const record = { time: new Date().toISOString(), level, msg: message, ...this.base, ...fields };
    this.write(JSON.stringify(record, errorReplacer));
  }
}

function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) {
    return { name: value.name, message: value.message, stack: value.stack };
  }
  return value;
}
