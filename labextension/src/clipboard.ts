/** Copy text to the system clipboard: the async Clipboard API, else a hidden textarea and `copy`. */

function copyWithTextarea(text: string): boolean {
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.appendChild(area);
  try {
    area.select();
    return document.execCommand('copy');
  } catch {
    return false;
  } finally {
    document.body.removeChild(area);
  }
}

export async function copyText(text: string): Promise<boolean> {
  const clipboard = typeof navigator !== 'undefined' ? navigator.clipboard : undefined;
  if (clipboard && clipboard.writeText) {
    try {
      await clipboard.writeText(text);
      return true;
    } catch {
      // NB: denied (no permission, page not focused): the textarea route may still work
    }
  }
  return copyWithTextarea(text);
}
