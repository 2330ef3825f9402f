// Known, harmless console noise of JupyterLab's own modules in jsdom (Yjs cells made before they join
// a document; no Clipboard API in jsdom); anything else still prints.
const NOISE = [/Invalid access: Add Yjs type to a document/, /\[yjs#509\] Not same Y\.Doc/, /Clipboard API not available/];
const warn = console.warn.bind(console);
console.warn = (...args) => {
  const text = args.map(String).join(' ');
  if (!NOISE.some(re => re.test(text))) {
    warn(...args);
  }
};
