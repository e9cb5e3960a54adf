"""The outbox: a page goes out with its postings or after them, an end after the pages before it;
two frames ahead; drain; losses."""

import pytest
import pytest_twisted
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler
from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.internet.task import deferLater

from farm.crawl.outbox import Outbox
from farm.state.lease import BatchResult, Lease, PageWrite
from farm.writer.process import WriteLost

LEASE = Lease(id=1, source="qcwy", city="北京", job="python", lease_token=1, start_page=1, from_status="fresh")


class RecordingWriter:
    """Takes frames like the state writer; the test answers each one."""

    def __init__(self):
        self.frames: list[tuple[list[bytes], list, Deferred]] = []
        self.ends: list[list] = []
        self.claims: list[list] = []

    def write(self, postings, pages, ends=(), claims=()):
        reply = Deferred()
        self.frames.append((postings, pages, reply))
        self.ends.append(list(ends))
        self.claims.append(list(claims))
        return reply

    def commit(self, index=-1, rejected=(), normalised=None, claimed=()):
        postings, pages, reply = self.frames[index]
        page_writes = [PageWrite(True, True, page, None) for _, page, *_ in pages]
        ends = ["failed" if kind == "failed" else "partial" for _, kind, _ in self.ends[index]]
        reply.callback(BatchResult(len(postings), page_writes, ends, list(rejected), normalised or {}, list(claimed)))

    def sent(self):
        return [
            ([row.decode() for row in postings], [page for _, page, *_ in pages]) for postings, pages, _ in self.frames
        ]


@pytest.fixture
def writer():
    return RecordingWriter()


@pytest.fixture
def lost():
    return []


def outbox(writer, lost, batch_size=100, flush_interval=60.0):
    stats = MemoryStatsCollector(get_crawler())
    return Outbox(writer, stats, batch_size, flush_interval, on_lost=lost.append)


def test_a_page_goes_out_at_once_with_the_postings_before_it(writer, lost):
    box = outbox(writer, lost)
    box.add_posting(b'"a"')
    box.add_posting(b'"b"')
    assert writer.sent() == []  # postings alone wait for a page, the batch size or the interval
    written = box.page_done(LEASE, 1, 2, 3)
    assert writer.sent() == [(['"a"', '"b"'], [1])]
    results = []
    written.addCallback(results.append)
    writer.commit()
    assert results == [PageWrite(True, True, 1, None)]


def test_two_frames_go_ahead_and_everything_arriving_meanwhile_goes_in_the_next(writer, lost):
    box = outbox(writer, lost)
    box.page_done(LEASE, 1, 0, 4)
    box.add_posting(b'"a"')
    box.page_done(LEASE, 2, 1, 4)
    assert writer.sent() == [([], [1]), (['"a"'], [2])]
    box.add_posting(b'"b"')
    box.page_done(LEASE, 3, 1, 4)
    box.add_posting(b'"c"')
    box.page_done(LEASE, 4, 1, 4)
    assert len(writer.frames) == 2  # both waiting for the writer
    writer.commit(0)
    assert writer.sent()[2] == (['"b"', '"c"'], [3, 4])


def test_a_page_whose_postings_overflow_the_batch_waits_for_the_frame_that_carries_them(writer, lost):
    box = outbox(writer, lost, batch_size=2)
    box.page_done(LEASE, 1, 0, 2)
    for row in (b"1", b"2", b"3"):
        box.add_posting(row)
    box.page_done(LEASE, 2, 3, 2)
    assert writer.sent()[1] == (["1", "2"], [])  # a full batch, without the page: "3" is not in it
    writer.commit(0)
    assert writer.sent()[2] == (["3"], [2])


@pytest_twisted.ensureDeferred
async def test_postings_alone_go_out_after_the_flush_interval(writer, lost):
    box = outbox(writer, lost, flush_interval=0.01)
    box.add_posting(b'"a"')
    assert writer.sent() == []
    drained = box.drain()
    assert writer.sent() == [(['"a"'], [])]  # a drain does not wait for the interval
    writer.commit()
    await drained
    box.add_posting(b'"b"')
    for _ in range(400):  # up to 2 s for a 0.01 s timer
        if len(writer.frames) == 2:
            break
        await deferLater(reactor, 0.005, lambda: None)
    assert writer.sent()[1] == (['"b"'], [])


def test_drain_fires_once_everything_queued_is_committed(writer, lost):
    box = outbox(writer, lost, batch_size=1)
    for row in (b"1", b"2", b"3"):
        box.add_posting(row)
    drained = box.drain()
    assert writer.sent() == [(["1"], []), (["2"], [])]
    writer.commit(0)
    assert not drained.called and writer.sent()[2] == (["3"], [])
    writer.commit(1)
    writer.commit(2)
    assert drained.called


def test_a_lost_frame_fails_every_page_queued_and_closes_the_crawl_once(writer, lost):
    box = outbox(writer, lost)
    pages = [box.page_done(LEASE, page, 0, 3) for page in (1, 2, 3)]  # two frames out, one queued
    failures = []
    for page in pages:
        page.addErrback(failures.append)
    writer.frames[0][2].errback(WriteLost("disk full"))
    writer.frames[1][2].errback(WriteLost("the state writer exited"))  # as the real writer fails it
    assert [f.check(WriteLost) for f in failures] == [WriteLost] * 3
    assert lost == ["disk full"]
    later = box.page_done(LEASE, 4, 0, 4)
    later.addErrback(failures.append)
    assert len(failures) == 4 and len(writer.frames) == 2  # nothing more is sent
    assert box.drain().called


def test_an_end_goes_out_at_once_after_the_pages_and_postings_queued_before_it(writer, lost):
    box = outbox(writer, lost, batch_size=2)
    box.page_done(LEASE, 1, 0, 3)  # frame 1
    for row in (b"1", b"2", b"3"):
        box.add_posting(row)
    box.page_done(LEASE, 2, 3, 3)  # its postings overflow frame 2
    ended = box.end(LEASE, "failed", "boom at page 3")
    assert writer.sent()[1] == (["1", "2"], []) and writer.ends[1] == []
    writer.commit(0)
    # the end rides with page 2, after it: the writer applies pages before ends
    assert writer.sent()[2] == (["3"], [2]) and writer.ends[2] == [(LEASE, "failed", "boom at page 3")]
    results = []
    ended.addCallback(results.append)
    writer.commit(1)
    writer.commit(2)
    assert results == ["failed"]


def test_postings_the_database_refused_are_counted_and_logged(writer, lost, caplog):
    box = outbox(writer, lost)
    box.add_posting(b'"a"')
    box.page_done(LEASE, 1, 1, 1)
    writer.commit(rejected=[("qcwy", "j9", "Data too long for column 'title'")])
    assert box.stats.get_value("farm/posting/rejected") == 1
    assert "qcwy j9" in caplog.text and "Data too long" in caplog.text


def test_fields_the_writer_fitted_to_their_columns_are_counted_by_name(writer, lost):
    box = outbox(writer, lost)
    box.add_posting(b'"a"')
    box.page_done(LEASE, 1, 1, 1)
    writer.commit(normalised={"title": 2, "published_at": 1})
    box.add_posting(b'"b"')
    box.page_done(LEASE, 2, 1, 2)
    writer.commit(normalised={"title": 1})
    assert box.stats.get_value("farm/posting/normalised/title") == 3
    assert box.stats.get_value("farm/posting/normalised/published_at") == 1


def test_a_count_the_writer_names_by_its_own_stat_is_counted_under_that_stat(writer, lost):
    box = outbox(writer, lost)
    box.add_posting(b'"a"')
    box.page_done(LEASE, 1, 1, 1)
    writer.commit(normalised={"farm/salary/unparsed": 2})
    assert box.stats.get_value("farm/salary/unparsed") == 2
    assert box.stats.get_value("farm/posting/normalised/farm/salary/unparsed") is None


def test_a_claim_goes_in_the_next_frame_out_and_fires_with_its_answer(writer, lost):
    box = outbox(writer, lost)
    box.page_done(LEASE, 1, 0, 4)
    box.page_done(LEASE, 2, 0, 4)  # two frames in flight: what comes now waits for the next
    box.add_posting(b'"a"')
    claimed = []
    box.claim("qcwy", "me", 2, frozenset({7}), frozenset({(1, 1)})).addCallback(claimed.append)
    assert len(writer.frames) == 2
    writer.commit(0)  # room: the claim goes out at once, with what was queued before it
    assert writer.sent()[2] == (['"a"'], [])
    assert writer.claims[2] == [("qcwy", "me", 2, frozenset({7}), frozenset({(1, 1)}))]
    assert claimed == []  # until the writer has made it
    writer.commit(2, claimed=[([LEASE], None)])
    assert claimed == [([LEASE], None)]
