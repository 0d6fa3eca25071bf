/**
 * YAML/JSON editor on CodeMirror 6, loaded on first use (its chunk stays out of the initial bundle).
 * Server validation messages (`details[].path` JSON Pointers) are shown as diagnostics at the line
 * of the key they name.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
// static: its only user (objects/config-editor) imports yaml statically, so a dynamic import here
// moved nothing out of that chunk and made every build warn INEFFECTIVE_DYNAMIC_IMPORT
import { parseDocument } from 'yaml';

export interface Diagnostic {
  /** JSON Pointer inside the edited document ('' = the whole document). */
  pointer: string;
  message: string;
}
interface Props {
  value: string;
  language: 'yaml' | 'json';
  onChange: (text: string) => void;
  diagnostics: Diagnostic[];
  label: string;
}

type Loaded = Awaited<ReturnType<typeof loadCodeMirror>>;
let loading: Promise<Loaded> | null = null;
async function loadCodeMirror() {
  const [cm, yaml, json, lint] = await Promise.all([import('codemirror'), import('@codemirror/lang-yaml'), import('@codemirror/lang-json'), import('@codemirror/lint')]);
  return { ...cm, yaml: yaml.yaml, json: json.json, lint, parseDocument };
}

/** Offset range of the node a pointer names, found by parsing the text (JSON is YAML too). */
function rangeOf(modules: Loaded, text: string, pointer: string): [number, number] {
  try {
    const doc = modules.parseDocument(text);
    const segments = pointer.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    for (let length = segments.length; length > 0; length--) {
      const path = segments.slice(0, length).map((s) => (/^\d+$/.test(s) ? Number(s) : s));
      const parent = doc.getIn(path.slice(0, -1), true) as { items?: { key?: { value?: unknown; range?: number[] }; range?: number[] }[] } | undefined;
      const pair = parent?.items?.find((item) => item.key && String(item.key.value) === String(path[path.length - 1]));
      if (pair?.key?.range) return [pair.key.range[0], pair.key.range[1]];
      const node = doc.getIn(path, true) as { range?: number[] } | undefined;
      if (node?.range) return [node.range[0], node.range[1]];
    }
  } catch {
    // unparsable text: the message goes on the first line
  }
  return [0, Math.min(1, text.length)];
}

export function CodeEditor({ value, language, onChange, diagnostics, label }: Props) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<InstanceType<Loaded['EditorView']> | null>(null);
  const modules = useRef<Loaded | null>(null);
  const latestChange = useRef(onChange);
  latestChange.current = onChange;
  const [failed, setFailed] = useState<unknown>(null);

  useEffect(() => {
    loading ??= loadCodeMirror();
    let cancelled = false;
    loading.then((m) => {
      if (cancelled || !host.current) return;
      modules.current = m;
      view.current = new m.EditorView({
        doc: value,
        parent: host.current,
        extensions: [
          m.basicSetup,
          language === 'yaml' ? m.yaml() : m.json(),
          m.lint.lintGutter(),
          m.EditorView.updateListener.of((update) => {
            if (update.docChanged) latestChange.current(update.state.doc.toString());
          }),
          m.EditorView.contentAttributes.of({ 'aria-label': label }),
        ],
      });
    }, setFailed);
    return () => {
      cancelled = true;
      view.current?.destroy();
      view.current = null;
    };
  }, [language]);

  // text replaced from outside (template chosen, mode switched)
  useEffect(() => {
    const v = view.current;
    if (v && v.state.doc.toString() !== value) v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: value } });
  }, [value]);

  useEffect(() => {
    const v = view.current;
    const m = modules.current;
    if (!v || !m) return;
    const text = v.state.doc.toString();
    const marks = diagnostics.map((d) => {
      const [from, to] = rangeOf(m, text, d.pointer);
      return { from, to, severity: 'error' as const, message: d.message };
    });
    v.dispatch(m.lint.setDiagnostics(v.state, marks));
  }, [diagnostics]);

  if (failed) return <textarea class="code" value={value} aria-label={label} onInput={(e) => onChange(e.currentTarget.value)} />;
  return <div class="editor" ref={host} data-editor={language} />;
}
