/** Provider tool names allow letters, digits, `_` and `-` (at most 64). */
export function toolNameSafe(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
}
