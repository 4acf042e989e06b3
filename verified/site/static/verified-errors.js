/* The pasted-message lookup (verified/site/error_search.py). The rules and the scoring are those of
   verified/probing/message_rules.py, read from window.VERIFIED_ERRORS (verified-errors-data.js): the
   build groups the index by the same rules this script reads the reader's text with. */
"use strict";

const VerifiedErrors = (() => {
  const data = window.VERIFIED_ERRORS || { rules: [], entries: [], weights: {}, token: "[a-z0-9_]+" };
  const rules = data.rules.map((r) => [new RegExp(r.pattern, "g"), r.replacement]);
  const ruleNamed = (name) => new RegExp((data.rules.find((r) => r.name === name) || { pattern: "^(?!)" }).pattern);
  const logPrefix = ruleNamed("log prefixes"), typeRule = ruleNamed("exception type");
  const tokenPattern = new RegExp(data.token, "g");

  const normalise = (message) => rules.reduce((text, [pattern, by]) => text.replace(pattern, by), message).trim();
  const tokens = (text) => text.toLowerCase().match(tokenPattern) || [];
  const queryType = (text) => {
    const found = text.trim().replace(logPrefix, "").match(typeRule);
    return found ? found[0].trim().replace(/:$/, "").trim() : "";
  };
  const pairs = (toks) => new Set(toks.slice(1).map((t, i) => toks[i] + " " + t));

  const entryTokens = data.entries.map((e) => tokens(e.n));
  const df = new Map();
  entryTokens.forEach((toks) => new Set(toks).forEach((t) => df.set(t, (df.get(t) || 0) + 1)));
  const idf = new Map([...df].map(([t, n]) => [t, Math.log(1 + data.entries.length / n)]));
  const rarest = Math.max(1, ...idf.values());
  const weight = (t) => (idf.has(t) ? idf.get(t) : rarest);
  const sum = (set) => [...set].reduce((a, t) => a + weight(t), 0);
  const W = data.weights;

  const score = (queryTokens, kind, toks, type) => {
    const query = new Set(queryTokens), entry = new Set(toks);
    const shared = new Set([...query].filter((t) => entry.has(t)));
    if (!shared.size) return 0;
    const sharedW = sum(shared), queryW = sum(query), entryW = sum(entry);
    const queryPairs = pairs(queryTokens), entryPairs = pairs(toks);
    const order = queryPairs.size ? [...queryPairs].filter((p) => entryPairs.has(p)).length / queryPairs.size : 0;
    let value = W.contained * sharedW / queryW + W.cosine * sharedW / Math.sqrt(queryW * entryW) + W.order * order;
    if (kind && kind === type) value += W.type;
    return value;
  };

  /* [[score, entry]] best first, none without a shared token. */
  const rank = (query) => {
    const queryTokens = tokens(normalise(query)), kind = queryType(query);
    return data.entries.map((e, i) => [score(queryTokens, kind, entryTokens[i], e.t), e])
      .filter(([s]) => s > 0).sort((a, b) => b[0] - a[0]);
  };

  /* The entries to show for a query, or none when it does not read as a message: it names an
     exception or warning type, or it is several words that an entry explains well. */
  const matches = (query, limit = 4) => {
    const ranked = rank(query);
    if (!ranked.length) return [];
    const best = ranked[0][0];
    const wordy = tokens(normalise(query)).length >= 4;
    if (!(queryType(query) && best >= 0.3) && !(wordy && best >= 0.45)) return [];
    return ranked.filter(([s]) => s >= 0.6 * best).slice(0, limit);
  };

  /* Whether a query reads as a pasted message: it names an exception or warning type, or it is
     several words long. */
  const looksLikeMessage = (query) => Boolean(queryType(query)) || tokens(normalise(query)).length >= 4;

  /* When Sphinx finds no page with every word of a pasted message (its search needs them all, and
     a message carries the reader's own names and numbers), the pages that share its rarer words:
     each shared search term counts log(1 + pages / pages with it), twice in a title, and a page's
     sum is divided by the square root of its length's share (0.5 + 0.5 * its terms / the average); it needs
     at least half the best page's score and two shared terms. `skip`: pages left out (the error
     index, whose entries the matcher has already ranked). Returns Sphinx's result tuples. */
  let sizes = null;
  const vocabularySizes = (index) => {  // distinct search terms per page, counted once
    if (sizes) return sizes;
    sizes = index.docnames.map(() => 0);
    Object.values(index.terms).forEach((docs) => (Array.isArray(docs) ? docs : [docs]).forEach((d) => sizes[d]++));
    return sizes;
  };
  const pagesSharingWords = (index, searchTerms, skip = new Set(), limit = 8) => {
    const pages = index.docnames.length, scores = new Map(), shared = new Map();
    const docsOf = (table, term) => {
      const docs = table[term];
      return docs === undefined ? [] : Array.isArray(docs) ? docs : [docs];
    };
    searchTerms.forEach((term) => {
      [[index.terms, 1], [index.titleterms, 2]].forEach(([table, factor]) => {
        const docs = docsOf(table, term);
        if (!docs.length) return;
        const weight = factor * Math.log(1 + pages / docs.length);
        docs.forEach((doc) => {
          scores.set(doc, (scores.get(doc) || 0) + weight);
          shared.set(doc, (shared.get(doc) || new Set()).add(term));
        });
      });
    });
    const long = vocabularySizes(index), average = long.reduce((a, n) => a + n, 0) / pages;
    const ranked = [...scores].filter(([doc]) => !skip.has(index.docnames[doc]) && shared.get(doc).size >= 2)
      .map(([doc, s]) => [doc, s / Math.sqrt(0.5 + 0.5 * long[doc] / average)])  // a long page shares more by chance
      .sort((a, b) => b[1] - a[1]);
    if (!ranked.length) return [];
    const best = ranked[0][1];
    return ranked.filter(([, s]) => s >= 0.5 * best).slice(0, limit).map(([doc, s]) =>
      [index.docnames[doc], index.titles[doc], "", null, s, index.filenames[doc], "text"]);
  };

  /* The sections whose title (two words or more) the pasted text contains word for word, such as
     "CUDA out of memory": longest title first, as Sphinx's result tuples with the section's anchor. */
  const plain = (text) => ` ${text.toLowerCase().replace(/[^a-z0-9_]+/g, " ").trim()} `;
  const sectionsNamedIn = (index, query, skip = new Set(), limit = 3) => {
    const text = plain(query), found = [];
    Object.entries(index.alltitles || {}).forEach(([title, places]) => {
      const words = plain(title).trim().split(" ");
      if (words.length < 2 || title.length < 10 || !text.includes(` ${words.join(" ")} `)) return;
      places.forEach(([doc, anchor]) => {
        if (!skip.has(index.docnames[doc]))
          found.push([index.docnames[doc], title, anchor ? "#" + anchor : "", null, words.length, index.filenames[doc], "title"]);
      });
    });
    return found.sort((a, b) => b[4] - a[4]).slice(0, limit);
  };

  const STRONG = 0.6;  // an entry's score (rank) from which it comes before the sections a message names
  return { normalise, tokens, queryType, rank, matches, looksLikeMessage, pagesSharingWords, sectionsNamedIn, STRONG, data };
})();

/* Sphinx's search page: the matching entries, and the pages that explain them, come first. */
if (typeof Search !== "undefined") {
  const performSearch = Search._performSearch;
  /* Sphinx shows the last result first, so each list below is built best first and reversed. */
  Search._performSearch = (query, searchTerms, excludedTerms, highlightTerms, objectTerms) => {
    let results = performSearch(query, searchTerms, excludedTerms, highlightTerms, objectTerms);
    let sections = [];
    if (VerifiedErrors.looksLikeMessage(query)) {
      const skip = new Set([VerifiedErrors.data.index]);
      if (!results.length) results = VerifiedErrors.pagesSharingWords(Search._index, searchTerms, skip).reverse();
      sections = VerifiedErrors.sectionsNamedIn(Search._index, query, skip);
    }
    const docNames = Search._index.docnames, titles = Search._index.titles, files = Search._index.filenames;
    const title = (doc) => (docNames.indexOf(doc) >= 0 ? titles[docNames.indexOf(doc)] : doc);
    const file = (doc) => (docNames.indexOf(doc) >= 0 ? files[docNames.indexOf(doc)] : doc);
    const seen = new Set(), strong = [], weak = [];
    const add = (list, doc, anchor, label, descr) => {
      const key = doc + "#" + anchor;
      if (seen.has(key)) return;
      seen.add(key);
      list.push([doc, label, "#" + anchor, descr, 1000 - seen.size, file(doc), "index"]);
    };
    const index = VerifiedErrors.data.index;
    VerifiedErrors.matches(query).forEach(([score, e]) => {
      // an entry far below a real match (those score above 1) yields to a section the message names
      const list = score >= VerifiedErrors.STRONG ? strong : weak;
      const said = e.cause ? ` (cause: ${e.cause}${e.fix ? "; fix: " + e.fix : ""})` : "";
      if (index) add(list, index, e.a, `${title(index)} > ${e.t}: ${e.m.slice(0, 160)}`, `${e.t}${said}`);
      e.c.slice(0, 2).forEach(([doc, anchor, id]) => add(list, doc, anchor, title(doc), `explains it: ${id}`));
    });
    sections = sections.filter((r) => !seen.has(r[0] + r[2]) && seen.add(r[0] + r[2]));
    const rest = results.filter((r) => !seen.has(r[0] + r[2]));
    return [...rest, ...weak.reverse(), ...sections.reverse(), ...strong.reverse()];
  };

  /* A query word of one letter (the "s" of "tensor's") is neither searched nor highlighted. */
  const parseQuery = Search._parseQuery;
  Search._parseQuery = (query) => {
    const parsed = parseQuery(query);
    const [, searchTerms, , highlightTerms] = parsed;
    [searchTerms, highlightTerms].forEach((set) => [...set].filter((t) => t.length < 2).forEach((t) => set.delete(t)));
    if (typeof SPHINX_HIGHLIGHT_ENABLED !== "undefined" && SPHINX_HIGHLIGHT_ENABLED)
      localStorage.setItem("sphinx_highlight_terms", [...highlightTerms].join(" "));
    return parsed;
  };
}

/* The box on the error index page. */
document.addEventListener("DOMContentLoaded", () => {
  const box = document.getElementById("verified-error-query");
  const list = document.getElementById("verified-error-matches");
  if (!box || !list) return;
  const root = document.documentElement.dataset.content_root || "";
  const here = (doc, anchor) => `${root}${doc}.html#${anchor}`;
  const show = () => {
    list.replaceChildren();
    const found = VerifiedErrors.matches(box.value, 5);
    if (box.value.trim() && !found.length) {
      list.appendChild(document.createElement("li")).textContent = "No entry shares enough with this text.";
    }
    found.forEach(([, e]) => {
      const item = list.appendChild(document.createElement("li"));
      const link = item.appendChild(document.createElement("a"));
      link.href = VerifiedErrors.data.index ? here(VerifiedErrors.data.index, e.a) : "#" + e.a;
      link.textContent = `${e.t}: ${e.m.length > 200 ? e.m.slice(0, 200) + "…" : e.m}`;
      if (e.cause || e.fix) {
        item.appendChild(document.createElement("div")).textContent =
          (e.cause ? "Cause: " + e.cause : "") + (e.fix ? " Fix: " + e.fix : "");
      }
      const pages = item.appendChild(document.createElement("div"));
      pages.append("Explained by ");
      e.c.forEach(([doc, anchor, id], i) => {
        if (i) pages.append(" · ");
        const claim = pages.appendChild(document.createElement("a"));
        claim.href = here(doc, anchor);
        claim.textContent = id;
      });
    });
  };
  let timer = null;
  box.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(show, 150);
  });
  const asked = new URLSearchParams(window.location.search).get("message");
  if (asked) {
    box.value = asked;
    show();
  }
});
