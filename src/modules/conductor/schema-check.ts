/**
 * Compile-time agreement between a response schema (valibot, for the API reference) and the TypeScript type the code
 * builds the answer with: `export type _Checked = Agrees<Same<v.InferOutput<typeof View>, Type>>` fails to compile
 * when either one gains, loses or changes a field the other does not.
 */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export type Agrees<T extends true> = T;
