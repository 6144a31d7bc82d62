"""One committed state of a knowledge base: what a read needs, read together.

:meth:`KnowledgeBase.state() <conceptwalk.kb.store.KnowledgeBase.state>` returns a
:class:`StoreState`: the graph snapshot, the text index of that graph's documents and the two
version counters, all taken inside one SQLite read transaction, so they describe the same
committed state of the store whatever another process writes meanwhile. A read that takes one
state and answers from it alone sees one state from start to end, and never fails because the
store moved under it (``graph()`` followed by ``text_index(graph)`` could see two).

It is immutable and shared: the same object is returned while the store is unchanged, and a
new one after any committed write (from any process).

Examples
--------
>>> from conceptwalk.kb import KnowledgeBase
>>> kb = KnowledgeBase.open(":memory:")
>>> _ = kb.add_nodes([{"id": "a", "title": "Graph walks"}])
>>> st = kb.state()
>>> st.graph.ids, st.text_index.num_docs, st.version, kb.state() is st
(['a'], 1, 1, True)
>>> _ = kb.add_nodes([{"id": "b", "title": "Forward push"}])
>>> kb.state() is st, st.graph.ids   # the old state is unchanged
(False, ['a'])
"""

from __future__ import annotations

from dataclasses import dataclass

from ..graph import Caller, LinkGraph
from ..graph.text import TextIndex
from ..graph.view import View

__all__ = ["StoreState"]


@dataclass(frozen=True, eq=False)
class StoreState:
    """The store at one committed state.

    Attributes
    ----------
    version : int
        The store's write counter at this state (:attr:`KnowledgeBase.version
        <conceptwalk.kb.store.KnowledgeBase.version>`; bumped by every committed write, those
        that cannot change the graph included: aliases, embeddings).
    graph_version : int
        The change-log position of ``graph`` (the snapshot's own version).
    graph : LinkGraph
        The graph snapshot at this state.
    text_index : TextIndex
        The text index of ``graph``'s nodes (titles and bodies at this state), documents in
        ``graph``'s node order.
    """

    version: int
    graph_version: int
    graph: LinkGraph
    text_index: TextIndex

    def view(self, caller: Caller) -> View:
        """The caller's view of this state: its prepared mask, its BM25 statistics of
        :attr:`text_index` and whatever the layers above keep per caller
        (:class:`~conceptwalk.graph.view.View`), made once per caller and shared.

        Parameters
        ----------
        caller : Caller

        Returns
        -------
        View

        Examples
        --------
        >>> from conceptwalk import Caller
        >>> from conceptwalk.kb import KnowledgeBase
        >>> kb = KnowledgeBase.open(":memory:")
        >>> _ = kb.add_nodes([{"id": "a", "title": "walks"}, {"id": "b", "title": "walks", "scopes": ["t"]}])
        >>> st = kb.state()
        >>> v = st.view(Caller.public())
        >>> v.mask.visible_count, st.text_index.search("walks", 5, visible=v)[0], st.view(Caller.public()) is v
        (1, [0], True)
        """
        return self.graph.view(caller)

    def __repr__(self) -> str:
        return (
            f"StoreState(version={self.version}, graph_version={self.graph_version}, "
            f"nodes={self.graph.num_nodes}, edges={self.graph.num_edges})"
        )
