"""Page furniture known by its words: what a line of a page says when it is chrome.

A class or id name is written for the site's developers, and is only a hint; the words
a reader reads are evidence. These patterns recognise, in the languages of the pages
the converter is measured on (English, German, French, Spanish, Portuguese, Italian,
Polish, Dutch), the short lines that are furniture wherever they stand (feedback
prompts, "last updated" stamps, share and comment prompts, photo credits, tag and
category labels, advertisement labels) and the headings of the blocks that point to
other pages ("Related posts", "Mehr zum Thema", "Czytaj też"). A heading only names
its block: the selection still asks the block's shape (links, teasers) before
leaving it out.

Pure functions over text.
"""

from __future__ import annotations

import re

#: a line no longer than this is furniture when it says so
MAX_FURNITURE_CHARS = 80

FURNITURE_RE = re.compile(
    r"\s*\(?\s*(?:"
    # feedback, stamps, edit and print links
    r"was this (?:page |article |section |answer )?(?:helpful|useful)|last (?:updated|modified|edited|reviewed)\b"
    r"|edit (?:this page|on github)\s*$|print this page|(?:\d+ )?min(?:ute)?s? read\s*$"
    r"|(?:fanden sie|war) (?:diese[nr]?|den) (?:artikel|beitrag|text) (?:nützlich|hilfreich)"
    r"|(?:lade|mehr) (?:weitere|mehr)? ?(?:inhalte|artikel|beiträge) ?(?:laden)?\W*$|load more\W*$"
    r"|zurück zur (?:übersicht|startseite)\W*$|back to (?:top|overview)\W*$|auf einer seite lesen\s*$"
    r"|quellen (?:aus|ein)blenden\s*$|bild anzeigen\s*$"
    r"|(?:[\w-]+ ){0,3}als pdf (?:herunterladen|downloaden)\W*$|télécharger (?:au format|en) (?:pdf|epub|mobi)\W*$"
    r"|download (?:as )?(?:pdf|epub)\W*$|(?:externer inhalt|external content|contenu externe)\W*$"
    # calls to subscribe, follow and support
    r"|(?:jetzt )?(?:zum )?(?:kostenlosen )?newsletter (?:anmelden|abonnieren|bestellen)"
    r"|subscribe (?:now|to (?:our|the) newsletter)\b"
    r"|sign up (?:here|now|for (?:our|the) newsletter)\b|follow us on\b|síguenos en\b|folgen sie uns\b"
    # legal lines
    r"|materiał chroniony prawem|(?:\()?alle angaben ohne gewähr|all rights reserved|copyright\s*:"
    r"|(?:anzeige|werbung)\s*[,:(]|this (?:post|article|page) contains (?:affiliate links|references)"
    # share prompts
    r"|share (?:this|on|via)\b|(?:diesen |den )?(?:artikel|beitrag|seite) teilen|teilen mit\s*:?\s*$"
    r"|(?:möchten sie )?(?:den|diesen|die(?:se)?) (?:artikel|beitrag|seite) (?:mit anderen )?teilen"
    r"|partager (?:cet|sur)\b|compartir (?:en|esta)\b|udostępnij\b|condividi\b"
    # comment prompts
    r"|(?:leave|post|write|add) a (?:comment|reply)|comments? (?:are )?closed|be the first to comment"
    r"|view comments|(?:log|sign) in to (?:comment|reply)|kommentare? (?:sind )?geschlossen"
    r"|(?:keine|no) (?:kommentare|comments)\W*$|(?:you must be )?logged in to (?:post a |leave a )?comment"
    r"|para comentar debes"
    r"|die kommentarfunktion|\d+ (?:comments?|kommentare?|antworten|commentaires?|comentarios?|komentarz\w*)\s*$"
    # a copyright sign, a source line (photo credits by their words: PHOTO_CREDIT_RE)
    r"|©|quelle\s*:"
    # labels of tag and category lines
    r"|(?:filed under|schlagworte)\s*$"
    # the label of a stamp whose value is not there (left out, or never filled: "Release Date:")
    r"|(?:release date|datum|date|veröffentlicht(?: am)?|veröffentlichung|published(?: on)?|posted on)\s*:\s*$"
    r"|(?:tags|tagged|tagged with|categories|category|filed under|posted in|schlagworte|schlagwörter|stichworte"
    r"|kategorien?|themen|étiquettes|etiquetas|tagi)\s*:"
    # advertisement labels
    r"|(?:advertisement|anzeige|werbung|reklama|publicidad|publicité|pubblicità|sponsored|gesponsert)\s*$"
    r")",
    re.IGNORECASE,
)
#: calls to get a newsletter or an app, to donate, to visit the site's shop or channel
CALL_WORDS = (
    r"get (?:the|our) (?:[\w-]+ ){0,3}newsletter|straight to your (?:phone|inbox)|would you consider supporting"
    r"|in (?:deinen|ihren) posteingang|besuchen sie unseren [\w-]*shop|je fais un don|apóyanos"
    r"|únete a nuestra comunidad|nuestro canal de youtube"
)
#: notices about the page rather than of it: affiliate disclosures ("Für Links auf dieser
#: Seite erhält CHIP ggf. eine Provision"), the licence of its text ("Dieser Text wurde
#: veröffentlicht unter der Lizenz CC-BY"), copyright notices, calls to get the site's app,
#: advertisers' disclosures; searched only in a text holding one of ``NOTICE_HINTS``
NOTICE_RE = re.compile(
    r"\b(?:für links auf dieser seite erhält"
    r"|(?:we|i) (?:may )?(?:earn|receive) (?:a )?(?:small )?(?:affiliate )?commission"
    r" (?:from|on|for|if you|when you (?:buy|click|purchase|shop))\b"
    r"|(?:dieser|der) (?:text|artikel|beitrag) (?:wurde |ist |steht )?(?:veröffentlicht )?unter (?:der|einer) lizenz"
    r"|this (?:article|post|work) is licensed under|is the copyrighted property of|written permission must be obtained"
    r"|wszelkie prawa zastrzeżone|download our (?:[\w-]+ ){0,2}apps?\b"
    r"|download the (?:[\w-]+ ){0,2}apps? (?:for|on) (?:ios|android|iphone|ipad)\b"
    r"|this (?:post|article|page) contains references to products)",
    re.IGNORECASE,
)
#: the words without one of which no text is a notice of ``NOTICE_RE`` (a search in C
#: before the regular expression's, which tries each phrase at every word)
NOTICE_HINTS = (
    "für links", "commission", "lizenz", "licensed under", "copyrighted", "permission must", "zastrzeżone",
    "download", "references to products",
)  # fmt: skip


def is_notice(text: str) -> bool:
    """Whether ``text`` holds a notice about the page (see ``NOTICE_RE``).

    >>> is_notice("Für Links auf dieser Seite erhält CHIP ggf. eine Provision vom Händler.")
    True
    >>> is_notice("Der Händler erhält eine Provision für jeden Verkauf.")
    False
    """
    lowered = text.lower()
    return any(hint in lowered for hint in NOTICE_HINTS) and NOTICE_RE.search(text) is not None


#: calls to subscribe, follow, support or come back, wherever they stand in a short line
CALL_RE = re.compile(
    r"\b(?:sign up here|subscribe now|jetzt abonnieren|newsletter abonnieren|hazte miembro|s[ií]guenos en|follow us on"
    r"|folgen sie uns auf|unterstütze[n]? (?:uns|unsere)|support (?:us|our journalism)|if you enjoyed (?:reading )?this"
    r"|gefällt (?:dir|ihnen) (?:unser|unsere|dieser|der)\b|become a (?:patron|subscriber)|" + CALL_WORDS + r")\b",
    re.IGNORECASE,
)
#: in a paragraph of its own (up to MAX_CALL_CHARS), only the calls no sentence of an
#: article makes about something else ("support us" and "unterstützen unsere" may be a
#: quote or a report)
CALL_PARAGRAPH_RE = re.compile(
    r"\b(?:sign up here|subscribe now|jetzt abonnieren|newsletter abonnieren|hazte miembro|s[ií]guenos en"
    r"|follow us on|folgen sie uns auf|support our journalism|if you enjoyed (?:reading )?this"
    r"|gefällt (?:dir|ihnen) unser\b|become a (?:patron|subscriber)|" + CALL_WORDS + r")\b",
    re.IGNORECASE,
)
_MONTHS = (
    r"jan(?:uary|uar|vier)?|feb(?:ruary|ruar)?|fév(?:rier)?|mar(?:ch|s)?|märz|apr(?:il)?|avr(?:il)?|may|mai|juni?|june"
    r"|juin|juli?|july|juillet|aug(?:ust)?|août|sep(?:tember|tembre)?|oct(?:ober|obre)?|okt(?:ober)?|nov(?:ember|embre)?"
    r"|dec(?:ember)?|dez(?:ember)?|déc(?:embre)?|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre"
    r"|octubre|noviembre|diciembre|janeiro|fevereiro|março|maio|junho|julho|setembro|outubro|novembro|dezembro"
    r"|gennaio|febbraio|aprile|maggio|giugno|luglio|settembre|ottobre|dicembre|stycznia|lutego|marca|kwietnia"
    r"|maja|czerwca|lipca|sierpnia|września|października|listopada|grudnia"
)
_WEEKDAYS = (
    r"mon|tue|wed|thu|fri|sat|sun|montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag|lundi|mardi|mercredi"
    r"|jeudi|vendredi|samedi|dimanche|lunes|martes|miércoles|jueves|viernes|sábado|domingo|poniedziałek|wtorek"
    r"|środa|czwartek|piątek|sobota|niedziela"
)
_DAY = r"(?:0?[1-9]|[12]\d|3[01])"
_MONTH = r"(?:0?[1-9]|1[0-2])"
#: a day and a month in either order, then the year: four digits after dots ("23.10.2018";
#: "3.11.20" is a version number; two before a time, "23.09.20 18:19"), two or four after
#: slashes or dashes ("10/23/18")
_NUMERIC_DATE = (
    rf"(?:{_DAY}\.\s?{_MONTH}|{_MONTH}\.\s?{_DAY})\.\s?(?:\d{{4}}|\d{{2}}(?=[\s,|-]+\d{{1,2}}:\d{{2}}))"
    rf"|(?:{_DAY}[/-]{_MONTH}|{_MONTH}[/-]{_DAY})[/-](?:\d{{4}}|\d{{2}})"
)
#: how long the page says it takes to read ("5 min read", "4 Min. Lesedauer")
READING_TIME_RE = re.compile(
    r"\d+\s*(?:min(?:ute)?s?\.?|minuten?)\s*(?:read|reading time|lesezeit|lesedauer|de lecture|de lectura)",
    re.IGNORECASE,
)
#: a line that is only a date or a time, with the word that introduces it ("Erstellt am
#: Dienstag 6. Mai 2014", "23.10.2018", "06 December 2019", "19:49")
DATE_LINE_RE = re.compile(
    r"\s*(?:(?:published|posted|updated|veröffentlicht|veröffentlichung|erstellt|aktualisiert|publié|publicado|opublikowano"
    r"|am|on|le|el|de|del|um|stand)\b[\s:,]*)*(?:(?:" + _WEEKDAYS + r")\w*\.?,? )?"  # the words before it
    r"(?:" + _NUMERIC_DATE + r"|\d{4}-\d{2}-\d{2}"
    r"|\d{1,2}\.?\s+(?:de\s+)?(?:" + _MONTHS + r")\.?(?:\s+(?:de\s+)?\d{4})?"
    r"|(?:" + _MONTHS + r")\.?\s+\d{1,2}(?:st|nd|rd|th)?,?(?:\s+\d{4})?)?"
    r"(?:[\s,|-]*(?:um\s+|at\s+|à\s+)?\d{1,2}(?::\d{2}|h\d{2}|\.\d{2}(?=\s*uhr))"
    r"(?:\s*(?:uhr|h|am|pm|gmt|utc|cet|cest))?)?\W*",
    re.IGNORECASE,
)
#: agencies and image libraries: a short line made of their names is a photo credit
CREDIT_RE = re.compile(
    r"[\w\s./|,&()+-]*\b(?:getty images|shutterstock|istock(?:photo)?|reuters|afp|dpa|ap photo|imago|picture.alliance"
    r"|epa|pap|epd|kna|efe|ansa|keystone|adobe ?stock|unsplash|pixabay|clipdealer|fotolia|depositphotos)\b"
    r"[\w\s./|,&()+-]*",
    re.IGNORECASE,
)

#: the start of a heading that names links to other pages, whatever words follow it
RELATED_OPEN = (
    r"more (?:stories|news|articles|posts|from|on|about)|read (?:more|also|further)|also on"
    r"|mehr (?:zum thema|zu[mr]?|aus|von)|auch interessant|lesen sie (?:auch|mehr)|noch mehr (?:infos|artikel|beiträge)"
    r"|(?:weitere|ähnliche|verwandte|passende) (?:artikel|beiträge|themen\w*|links|nachrichten|meldungen|inhalte"
    r"|tipps|\w+tipps|infos)|weitere aktuelle (?:artikel|beiträge|themen|nachrichten)|top[- ]themen"
    r"|(?:temas|contenidos?|artículos|noticias|notas) relacionad[oa]s?|vous aimerez|articles les plus lus"
    r"|(?:notícias|artigos|posts) relacionad[oa]s?|veja também|leia também|(?:weitere|mehr) informationen zu[mr]?"
)
#: headings of blocks that point to other pages
RELATED_HEADING_RE = re.compile(
    r"\s*(?:"
    r"related(?: \w+)?|more (?:stories|news|articles|posts|from|on|about|in|like this|to read)\b"
    r"|you (?:may|might|could|will) (?:also )?(?:like|enjoy|be interested)|also (?:read|on)\b|read (?:more|next|also)\b"
    r"|recommended(?: for you| reading| articles)?"
    r"|(?:most )?(?:popular|read|viewed|shared)(?: (?:now|stories|articles))?"
    r"|trending|latest (?:news|posts|articles|stories)|recent (?:posts|articles|news|stories)|don.t miss|keep reading"
    r"|what to read next|top stories|editor.s picks|further reading on"
    r"|similar (?:articles|posts|stories|topics|threads)"
    r"|mehr (?:zum thema|zu[mr]? |aus |von |news|artikel|nachrichten|beiträge|dazu)|auch interessant"
    r"|das (?:könnte|dürfte) (?:sie|dich) (?:auch )?interessieren|(?:weitere|ähnliche|verwandte|passende) "
    r"(?:artikel|beiträge|themen|links|nachrichten|meldungen|inhalte)|weiterführende (?:links|artikel|informationen)"
    r"|lesen sie (?:auch|mehr)|weiterlesen|(?:weitere|mehr) informationen|więcej informacji"
    r"|meistgelesen|beliebte (?:artikel|beiträge)|(?:neueste|aktuelle|letzte|neue) "
    r"(?:artikel|beiträge|nachrichten|berichte)|passend dazu|zum weiterlesen|empfehlungen der redaktion"
    r"|(?:à )?lire aussi|vous aimerez (?:aussi|également)|sur le même (?:sujet|thème)|dans la même rubrique"
    r"|articles? (?:similaires|liés|connexes|recommandés)|les plus lus"
    r"|(?:contenido|artículos|noticias|notas) relacionad[oa]s|(?:también )?(?:te|le) (?:puede|podría) interesar"
    r"|lee también|más noticias|lo más leído"
    r"|veja também|leia também|(?:notícias|artigos|posts) relacionad[oa]s|mais lidas|você (?:também )?pode gostar"
    r"|leggi anche|potrebbe interessarti|articoli correlati|i più letti"
    r"|zobacz (?:również|też|także)|czytaj (?:też|także|również|więcej)|przeczytaj (?:też|także|również)"
    r"|inne artykuły|najczęściej czytane|polecane"
    r"|lees ook|gerelateerde? (?:artikelen|berichten)?|meer nieuws"
    r"|(?:the )?next (?:article|post|story)|(?:der )?nächste[rn]? (?:artikel|beitrag)|schon gelesen|popular videos"
    # phrases that name such a block with a few words of their own ("Mehr zum Thema Job
    # und Karriere", "Weitere Beiträge aus der Kolumne:", "Auch interessant für dich")
    r"|(?:" + RELATED_OPEN + r")(?:\s+\S+){0,5}"
    r")\W*$",
    re.IGNORECASE,
)
#: the start of a line that points to another page ("Read also: <link>")
READ_ALSO_RE = re.compile(
    r"\s*(?:read (?:also|more)|also read|lesen sie (?:auch|mehr)|mehr zum thema|auch interessant|lire aussi"
    r"|à lire aussi|lee también|leia também|veja também|leggi anche|czytaj (?:też|także|również|więcej)"
    r"|zobacz (?:też|także|również)|przeczytaj (?:też|także|również)|lees ook"
    r"|lesen sie hier|(?:vea|ver|lea) también|puedes ver|leia mais|lisez aussi)\b",
    re.IGNORECASE,
)


#: the words that open a photo credit ("Foto:", "Photo by", "Credits:"); the
#: line is a credit when names follow them (:func:`credit_names`), not a description
PHOTO_CREDIT_RE = re.compile(
    r"\s*\(?\s*(?:(?:foto|photo|bild|image|picture|titelbild|aufmacherbild|fotos|photos)"
    r"\s*(?::|by\b|von\b|via\b|©|credits?\b)"
    r"|(?:crédits?|credits?|créditos?) ?(?:photos?|images?)?\s*:)",
    re.IGNORECASE,
)


#: how a photo credit opens: a copyright sign or a credit word
CREDIT_OPEN_RE = re.compile(
    r"[(\[]?\s*(?:©|\(c\)|(?:fotos?|photos?|bild|credits?|crédits?|créditos?)\b)", re.IGNORECASE
)


def opens_credit(text: str) -> bool:
    """Whether ``text`` opens as a photo credit does ("© imago images/IPON, ...").

    >>> opens_credit("© imago images/IPON"), opens_credit("Foto: dpa"), opens_credit("The photo shows")
    (True, True, False)
    """
    return CREDIT_OPEN_RE.match(text.lstrip()) is not None


def is_furniture(text: str) -> bool:
    """Whether the short line ``text`` is furniture by its words.

    >>> [is_furniture(t) for t in ("Was this page helpful?", "Foto: Ingo Pertramer", "Tags: a, b",
    ...     "Getty Images", "12 Comments", "Anzeige", "Comments", "The photo shows a bridge.")]
    [True, True, True, True, True, True, False, False]
    >>> [is_furniture(t) for t in ("(Quelle: Landesregierung Hessen)", "aja/PAP", "Sign up here", "Keine Kommentare",
    ...     "Subscribe to new mailbox.", "A support user", "Become a member of the group")]
    [True, True, True, True, False, False, False]
    >>> [is_furniture(t) for t in ("Dieses Skript als PDF herunterladen", "Externer Inhalt", "Download the report")]
    [True, True, False]
    >>> [is_furniture(t) for t in ("Release Date:", "Datum:", "Date: 3 May", "Published in Nature")]
    [True, True, False, False]
    >>> [is_furniture(t) for t in ("Quelle: dpa", "Foto: privat", "Photo by Ann Smith", "Bild von oben auf die Stadt",
    ...     "Photos by the river at sunset", "Credits: the people who made this film")]
    [True, True, True, False, False, False]
    """
    if len(text) > MAX_FURNITURE_CHARS:
        return False
    stripped = text.strip()
    credit = PHOTO_CREDIT_RE.match(stripped)
    if credit is not None and credit_names(stripped[credit.end() :]):
        return True
    return bool(
        FURNITURE_RE.match(stripped) or CREDIT_RE.fullmatch(stripped) or CALL_RE.search(stripped) or is_notice(stripped)
    )


def is_dateline(text: str) -> bool:
    """Whether the short line ``text`` is only a date or a time (a stamp, not a heading).

    >>> [is_dateline(t) for t in ("23.10.2018", "Erstellt am Dienstag 6. Mai 2014", "06 December 2019",
    ...     "16 marca 2021", "19:49", "January 13", "2021", "Version 2.10", "Python 3.11.20", "May the force", "")]
    [True, True, True, True, True, True, False, False, False, False, False]
    >>> is_dateline("Veröffentlichung: 2. Februar 2022")
    True
    >>> [is_dateline(t) for t in ("10/23/18", "23-10-2018", "3.11.20", "2.28.12", "1.2.10", "12-5-100", "32.10.2018")]
    [True, True, False, False, False, False, False]
    """
    stripped = text.strip()
    return 0 < len(stripped) <= 60 and any(c.isdigit() for c in stripped) and bool(DATE_LINE_RE.fullmatch(stripped))


def is_related_heading(text: str) -> bool:
    """Whether the heading ``text`` names a block of links to other pages.

    >>> [is_related_heading(t) for t in ("Related posts", "Mehr zum Thema", "Czytaj też:", "See also",
    ...     "Related work in the field of boilerplate detection", "Weitere Beiträge aus der Kolumne:",
    ...     "Read the documentation", "More about the parser and its many options and flags", "Similar Articles",
    ...     "Veja Também:")]
    [True, True, True, False, False, True, False, False, True, True]
    """
    return len(text) <= MAX_FURNITURE_CHARS and RELATED_HEADING_RE.match(text) is not None


def is_read_also(text: str) -> bool:
    """Whether the line ``text`` starts by pointing to another page.

    >>> is_read_also("Lesen Sie auch: Der Hafen wird erweitert"), is_read_also("Read the docs")
    (True, False)
    >>> is_read_also("VEA TAMBIÉN: Otro artículo"), is_read_also("Lesen Sie hier: Der Hafen")
    (True, True)
    """
    return READ_ALSO_RE.match(text) is not None


#: a photo credit closing a caption or an alt text, after its last sentence: "Foto: GdP/Hagen
#: Immel", "(Quelle: Fleischmann/Unsplash/DJV)", "© aremac / Clipdealer", "photo: Archives
#: du Gouvernement"; a credit word with its colon (or a ©) and a short name, no sentence in it
#: (group 1: the credit word)
TRAILING_CREDIT_RE = re.compile(
    r"(?:^|(?<=\s))[(\[]?\s*((?:fotos?|photos?|bild(?:er)?|quelle|crédits?|créditos?|credits?)\s*(?::|©)|©|\(c\)"
    r"|(?:fotos?|photos?|bild(?:er)?)\s+(?:by|von|via)\b)"
    r"(?:[^.!?:;()\[\]]|\.(?=\w)){0,90}(?:\.(?=[^.]*$)[^.!?:;()\[\]]{0,30})?[)\]]?\.?\s*$",
    re.IGNORECASE,
)
#: a closing parenthesis that names an agency or an image library ("(mlharing / iStock.com)")
TRAILING_AGENCY_RE = re.compile(r"(?:^|(?<=\s))\(([^()]{1,60})\)\s*$")


def without_credit(caption: str) -> str:
    """The caption (or alt text) ``caption`` without the photo credit that closes it;
    ``caption`` itself when no credit closes it.

    >>> without_credit("GdP-Vize und Tarifexperte René Klemmer. Foto: GdP/Hagen Immel")
    'GdP-Vize und Tarifexperte René Klemmer.'
    >>> without_credit("Das FWR reagiert mit Entsetzen. (Quelle: Fleischmann/Unsplash/DJV)")
    'Das FWR reagiert mit Entsetzen.'
    >>> without_credit("Das Hermelin ist gut getarnt. (mlharing / iStock.com)")
    'Das Hermelin ist gut getarnt.'
    >>> without_credit("Puerto de Montevideo. Foto: Archivo El País.")
    'Puerto de Montevideo.'
    >>> without_credit("Paris Haute Couture SS14, Serkan Cura, Bild via")
    'Paris Haute Couture SS14, Serkan Cura,'
    >>> captions = ("A bridge over the Rhine (2019)", "Photo of the new bridge",
    ...     "The photographer: Ann Smith took this in 2019. It shows the bridge.", "Bild 3: Der Aufbau",
    ...     "Bild von oben auf die Stadt Hamburg", "Photos by the river at sunset",
    ...     "Credits: the people who made this film possible")
    >>> [without_credit(t) for t in captions] == list(captions)
    True
    >>> without_credit("Foto: GdP/Hagen Immel"), without_credit("Photo by Ann Smith")
    ('', '')
    """
    match = TRAILING_CREDIT_RE.search(caption)
    if match is None:
        match = TRAILING_AGENCY_RE.search(caption)
        if match is None or not CREDIT_RE.fullmatch(match.group(1)):
            return caption
    elif not caption[: match.start()].strip() and not credit_names(caption[match.end(1) :]):
        return caption  # the whole caption: a credit only when what follows the credit word is names
    return caption[: match.start()].rstrip()


#: words of a credit that are not names: joining words ("Hagen Immel und Jan Berg",
#: "Archivo de El País"), what a credit names instead of a person ("Foto: privat"), and a
#: licence's ("[CC BY-SA 3.0], via Wikimedia Commons", "Lizenz: CC BY 4.0")
_CREDIT_WORDS = frozenset(
    (
        *("und", "and", "y", "et", "e", "de", "del", "da", "do", "van", "von", "der", "la", "le", "privat", "archiv"),
        *("via", "cc", "by", "sa", "nc", "nd", "public", "domain", "lizenz:", "lizenz", "license:", "license"),
    )
)


def credit_names(text: str) -> bool:
    """Whether ``text``, what follows a credit word, names who made the picture: an
    agency (``CREDIT_RE``) or names and a licence (more than two thirds of its words
    capitalized, digits or :data:`_CREDIT_WORDS`), not a description of the picture.

    >>> credit_names(" GdP/Hagen Immel"), credit_names(" oben auf die Stadt Hamburg"), credit_names(" dpa")
    (True, False, True)
    >>> credit_names(" BBKurt [CC BY-SA 3.0], via Wikimedia Commons"), credit_names(" Kindern beim Spielen im Park")
    (True, False)
    >>> credit_names(" Instagram/dannibuechner"), credit_names(" oben/unten ein Haus am See")
    (True, False)
    """
    stripped = text.strip(" ()[].")
    if stripped and CREDIT_RE.fullmatch(stripped):
        return True
    parts = _CREDIT_SPLIT_RE.split(text)  # words, and the separators between them
    words = [(word, "/" in parts[at - 1] if at else False) for at, word in enumerate(parts) if at % 2 == 0]
    words = [(word, slashed) for word, slashed in words if word.strip(".-")]
    named = sum(
        slashed or word[0].isupper() or word[0].isdigit() or word.lower() in _CREDIT_WORDS for word, slashed in words
    )
    return bool(words) and named * 3 > len(words) * 2


#: what separates the words of a credit; a word after a slash is a part of a credit
#: ("Instagram/dannibuechner", an agency and its photographer's handle)
_CREDIT_SPLIT_RE = re.compile(r"([\s/,&|+()\[\]]+)")


#: a call paragraph is at most this long
MAX_CALL_CHARS = 320


def is_call(text: str) -> bool:
    """Whether the paragraph ``text`` (longer than a furniture line, at most
    ``MAX_CALL_CHARS``) calls the reader to subscribe, follow, support or donate.

    >>> is_call("If you enjoyed reading this post - would you consider supporting our work? Just click here.")
    True
    >>> is_call("Siguenos en Telegram, Instagram, Facebook y Twitter para recibir en directo todas nuestras noticias")
    True
    >>> is_call("For the latest stories and breaking news updates download the Nationnews apps for iOS and Android.")
    True
    >>> [is_call(t) for t in ("Wir unterstützen unsere Mitglieder bei der Suche nach einer Wohnung in der Stadt.",
    ...     "'Please support us,' the mayor told the council on Tuesday before the vote on the budget.")]
    [False, False]
    """
    text = " ".join(text.split())
    return len(text) <= MAX_CALL_CHARS and (CALL_PARAGRAPH_RE.search(text) is not None or is_notice(text))
