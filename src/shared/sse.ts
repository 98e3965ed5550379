/** Server-Sent Events framing, shared by the conductor run stream and the /v1 event stream. */
export interface SseFrame {
  id?: string;
  event?: string;
  data: string;
}

const encoder = new TextEncoder();

export function encodeSseFrame(frame: SseFrame): Uint8Array {
  let out = '';
  if (frame.id !== undefined) out += `id: ${frame.id}\n`;
  if (frame.event !== undefined) out += `event: ${frame.event}\n`;
  for (const line of frame.data.split('\n')) out += `data: ${line}\n`;
  return encoder.encode(out + '\n');
}

export function encodeSseComment(text: string): Uint8Array {
  return encoder.encode(`: ${text}\n\n`);
}
