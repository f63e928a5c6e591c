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
  const min = RANK[options.level];
  const base = options.fields ?? {};
  const write = options.write ?? defaultWrite;
  const emit = (level: LogLevel, message: string, fields?: LogFields): void => {
    if (RANK[level] < min) return;
    const record = { time: new Date().toISOString(), level, msg: message, ...base, ...fields };
    write(JSON.stringify(record, errorReplacer));
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    child: (fields) => createLogger({ ...options, fields: { ...base, ...fields } }),
  };
}

function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) {
    return { name: value.name, message: value.message, stack: value.stack };
  }
  return value;
}
