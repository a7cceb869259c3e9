/**
 * Text a client chose about itself (`client_name`, RFC 7591 section 2), made
 * fit to show a person: control characters and the Unicode bidirectional
 * controls removed (a right-to-left override could make "Evil" read as
 * something else; Unicode Technical Report 36, section 2.1), runs of white
 * space collapsed, and the result cut to `maxLength` characters with an
 * ellipsis, so a very long name cannot push the buttons off the page.
 * Escaping is the page's job (markup.ts); this only decides what is shown.
 */
export function displayText(text: string, maxLength: number): string {
  const cleaned = text
    // C0 and C1 controls, the bidi marks, embeddings, overrides and isolates, zero-width joiners aside.
    // eslint-disable-next-line no-control-regex -- matching control characters is the point
    .replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const characters = [...cleaned];
  return characters.length <= maxLength ? cleaned : `${characters.slice(0, maxLength - 1).join('')}…`;
}
