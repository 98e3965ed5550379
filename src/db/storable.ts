/**
 * The storage encoding: every string on its way into PostgreSQL, and back out, passes here (pipelined.ts for every
 * statement through Kysely, database.ts for the job queue's own statements and for notifications), so any text an
 * agent, a command or a client produced can be stored and is read back exactly as it was, code unit for code unit.
 *
 * PostgreSQL cannot hold three things a JavaScript string can: U+0000 (`text` and `jsonb` refuse it, `\u0000` too), a
 * lone surrogate (U+D800-U+DFFF without its pair: it has no UTF-8 form; `jsonb` refuses its escape and a `text`
 * parameter silently becomes U+FFFD). A NUL-separated /proc file, a binary file printed by `cat`, a tool that cut a
 * string inside a pair: all common in what agents see. So each of them, and the escape character itself, is stored
 * as U+FFFF followed by the code unit's four lower-case hex digits (NUL is U+FFFF "0000"). U+FFFF is a noncharacter,
 * which Unicode sets aside for a program's internal use: no text an agent prints carries it, so nearly every string
 * goes through unchanged after one scan, and the rare one that does is still given back exactly (U+FFFF "ffff").
 * The mapping is one to one, so equality and prefix matches in SQL keep working on stored values.
 *
 * Invalid UTF-8 never gets this far: bytes become text where they are read (a command's output on the runner, a
 * file the file tools read), decoded with U+FFFD for what is not UTF-8, once, so a live stream and its replay agree.
 */
const ESC = '\uffff';

/** Characters that never reach PostgreSQL as they are (a lone surrogate is told by its neighbours). */
const UNSTORABLE = /[\0\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const NUL_OR_ESC = /[\0\uffff]/;
/** Only what `encodeText` writes is undone: any other U+FFFF (data stored before this encoding) is left alone. */
const ESCAPED = /\uffff(0000|d[89a-f][0-9a-f]{2}|ffff)/g;

const escape = (c: string) => ESC + c.charCodeAt(0).toString(16).padStart(4, '0');

export function encodeText(s: string): string {
  if (!NUL_OR_ESC.test(s) && s.isWellFormed()) return s;
  return s.replace(UNSTORABLE, escape);
}

export function decodeText(s: string): string {
  if (!s.includes(ESC)) return s;
  return s.replace(ESCAPED, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/**
 * A value with `f` applied to every string in it (object keys included), copied only along the paths where something
 * changed: the caller's objects are never modified, and a value with nothing to change is returned as it is. Only
 * plain objects and arrays are entered (a Date, a Buffer or a class instance is a leaf).
 */
function mapStrings(value: unknown, f: (s: string) => string): unknown {
  if (typeof value === 'string') return f(value);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const next = mapStrings(value[i], f);
      if (next !== value[i]) (out ??= value.slice())[i] = next;
    }
    return out ?? value;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const o = value as Record<string, unknown>;
  const keys = Object.keys(o);
  let out: Record<string, unknown> | undefined;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    const key = f(k);
    const next = mapStrings(o[k], f);
    if (!out && (key !== k || next !== o[k])) {
      out = {};
      for (let j = 0; j < i; j++) define(out, keys[j], o[keys[j]]);
    }
    if (out) define(out, key, next);
  }
  return out ?? value;
}

/** A plain assignment would make a `__proto__` key (JSON.parse gives one as an own property) set the prototype. */
function define(o: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

/** A statement parameter (a string, an array of them, a JSON-ish object) made storable. */
export const encodeValue = <T>(value: T): T => mapStrings(value, encodeText) as T;

/** A value read from the database (a row, a parsed jsonb value, a notification payload) as it was written. */
export const decodeValue = <T>(value: T): T => mapStrings(value, decodeText) as T;

/** `\u0000`, a lone surrogate's escape (JSON.stringify writes lower-case hex, and escapes only lone ones), or U+FFFF. */
const JSON_UNSTORABLE_TEST = /\\u(?:0000|d[89a-f])|\uffff/;
/** The same, with `\\` matched too, so that an escaped backslash followed by the letters `u0000` is left alone. */
const JSON_UNSTORABLE = /\\(?:u(0000|d[89a-f][0-9a-f]{2})|\\)|\uffff/g;

/**
 * JSON text for a `jsonb` parameter with every string in it encoded as `encodeText` would, but written as JSON escapes
 * (`\u0000` becomes `\uffff0000`): the text itself then holds nothing the statement encoding changes, so it is not
 * encoded twice, and PostgreSQL stores exactly the strings `encodeText` would have stored. One scan of the text
 * instead of a walk over the value; text without any of them (nearly all) is JSON.stringify's own.
 */
export function storableJson(value: unknown): string {
  const text = JSON.stringify(value) as string | undefined;
  if (text === undefined || !JSON_UNSTORABLE_TEST.test(text)) return text as string;
  return text.replace(JSON_UNSTORABLE, (m, hex: string | undefined) => (hex ? `\\uffff${hex}` : m === ESC ? '\\uffffffff' : m));
}

/**
 * PostgreSQL refused the data itself, not the moment: SQLSTATE class 22 (data exception: bad encoding, a value out of
 * range, invalid text) or 54 (a program limit: a value too large). Sending the same rows again cannot succeed.
 */
export function isUnstorable(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && /^(22|54)[0-9A-Z]{3}$/.test(code);
}
