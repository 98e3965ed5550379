/** A failure that carries details for the model besides the message (a command's output, for example). */
export class ToolFailure extends Error {
  readonly details: Record<string, unknown>;
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'ToolFailure';
    this.details = details;
  }
}
