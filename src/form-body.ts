/** Whether a mapped hook's body is read as form fields (CONTRACT.md §5): a form type, unless the text is a JSON object's (`curl -d`). */
export function readsAsForm(contentType: string | undefined, text: string): boolean {
  return contentType !== undefined && contentType.trimStart().toLowerCase().startsWith('application/x-www-form-urlencoded') && !text.trimStart().startsWith('{');
}
