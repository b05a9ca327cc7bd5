/** Raised by a tool for an expected failure: the message goes to the model as an error result. */
export class ToolError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ToolError'
  }
}
