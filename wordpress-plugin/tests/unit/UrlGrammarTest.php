<?php
use VarnishEdge\Event_Builder;
use VarnishEdge\Invalidation;
use VarnishEdge\Key_Scheme;
use VarnishEdge\Url_Grammar;

/**
 * The one URL grammar, shared with the purger (testdata/url-grammar.json): the plugin accepts
 * exactly what the purger accepts, in the same normalized form, so a link the purger would refuse
 * (`http://user@host/`, `host:/`, `host:0080`) never makes it refuse a batch.
 */
class UrlGrammarTest extends \PHPUnit\Framework\TestCase {

	private static function grammar(): array {
		return json_decode( (string) file_get_contents( dirname( __DIR__, 3 ) . '/testdata/url-grammar.json' ), true );
	}

	public function test_the_grammar_is_the_shared_one(): void {
		$grammar = self::grammar();
		$this->assertSame( $grammar['maxLength'], Url_Grammar::MAX_LENGTH );
		foreach ( $grammar['sites'] as $site => $cases ) {
			foreach ( $cases['valid'] as $case ) {
				$this->assertSame( array( $case['normalized'], '' ), Url_Grammar::check( $case['url'], $site ), $case['url'] );
				$this->assertSame( array( $case['normalized'], '' ), Url_Grammar::check( $case['normalized'], $site ), 'normalized: ' . $case['normalized'] );
			}
			foreach ( $cases['invalid'] as $case ) {
				list( $url, $why ) = Url_Grammar::check( $case['url'], $site );
				$this->assertSame( '', $url, wp_json_encode( $case ) );
				$this->assertNotSame( '', $why, wp_json_encode( $case ) );
			}
		}
		$base    = 'http://example.com/';
		$longest = $base . str_repeat( 'a', $grammar['maxLength'] - strlen( $base ) );
		$this->assertSame( array( $longest, '' ), Url_Grammar::check( $longest, 'example.com' ) );
		$this->assertSame( '', Url_Grammar::check( $longest . 'a', 'example.com' )[0] );
		// PHP's `$` also matches before a final newline; JavaScript's (the purger's) does not.
		$this->assertSame( '', Url_Grammar::check( "http://example.com:8080\n", 'example.com:8080' )[0] );
	}

	public function test_a_logged_url_shows_no_credentials_nor_query(): void {
		$this->assertSame( 'http://…@example.com/a/?…', Url_Grammar::redact( 'http://user:secret@example.com/a/?token=secret#x' ) );
		$this->assertSame( 'http://example.com/a/', Url_Grammar::redact( 'http://example.com/a/#secret' ) );
	}

	/**
	 * Every vector as a refresh URL: the valid ones sent in their normalized form (in the first
	 * one's scheme), the invalid ones of this site dropped and logged, the invalidation whole.
	 * Fails on the plugin before the shared grammar: it sent them all, and the purger refused the batch.
	 */
	public function test_refresh_urls_outside_the_grammar_are_dropped_not_the_batch(): void {
		$cases = self::grammar()['sites']['example.com'];
		$log   = $this->capture_log();
		$inv   = ( new Invalidation() )->tags( array( 'ns-site-name' ), true )
			->refresh( array_merge( array_column( $cases['invalid'], 'url' ), array_column( $cases['valid'], 'url' ) ) );
		$events = Event_Builder::build( $inv, 'example.com', new Key_Scheme( 'ns' ), time() );
		$lines  = $this->read_log( $log );

		$this->assertCount( 1, $events );
		$this->assertSame( 'tags', $events[0]['kind'], 'no whole-site purge for a refresh hint' );
		// Before the grammar the plugin repairs what it can: spaces, control characters and
		// non-ASCII in a path percent-encoded (the purger never sees them raw).
		$repaired = array( 'http://example.com/about%20us/', 'http://example.com/about/%09', 'http://example.com/a%00b/', 'http://example.com/a%7Fb/', 'http://example.com/caf%C3%A9/' );
		$valid    = preg_replace( '~^https?:~', 'http:', array_column( $cases['valid'], 'normalized' ) );
		$this->assertSame( array_values( array_unique( array_merge( $repaired, $valid ) ) ), $events[0]['refresh'] );
		foreach ( $events[0]['refresh'] as $url ) {
			$this->assertSame( array( $url, '' ), Url_Grammar::check( $url, 'example.com' ) );
		}
		$this->assertStringContainsString( "Varnish Edge: refresh URL outside the protocol's URL grammar (has credentials), dropped: http://…@example.com/about/", $lines );
		$this->assertStringContainsString( 'dropped: http://example.com:0080/about/', $lines );
		$this->assertStringContainsString( 'dropped: http://example.com:/about/', $lines );
		$this->assertStringNotContainsString( 'other.test', $lines, 'links to other hosts are no error' );
		$this->assertStringNotContainsString( 'secret', $lines );
	}

	/** A URL to purge that the grammar refuses still invalidates its page: the whole site goes. */
	public function test_a_url_to_purge_outside_the_grammar_purges_the_whole_site(): void {
		$log    = $this->capture_log();
		$inv    = ( new Invalidation() )->tags( array( 'ns-p-1' ) )->urls( array( 'http://example.com/ok/', 'http://user:secret@example.com/about/' ) )->refresh( array( 'http://example.com/ok/' ) )->reason( 'URLs purged by code' );
		$events = Event_Builder::build( $inv, 'example.com', new Key_Scheme( 'ns' ), time() );
		$this->assertCount( 1, $events );
		$this->assertSame( 'all', $events[0]['kind'] );
		$this->assertFalse( $events[0]['soft'] );
		$this->assertSame( array( 'http://example.com/ok/' ), $events[0]['refresh'] );
		$this->assertSame( "a URL outside the protocol's grammar: whole site purged instead; URLs purged by code", $events[0]['reason'] );
		$this->assertStringContainsString( "URL to purge outside the protocol's URL grammar (has credentials), the whole site is purged instead: http://…@example.com/about/", $this->read_log( $log ) );

		foreach ( array( 'http://example.com:0080/a/', 'http://example.com:/a/' ) as $url ) {
			$this->assertSame( 'all', Event_Builder::build( ( new Invalidation() )->urls( array( $url ), true ), 'example.com', new Key_Scheme( 'ns' ), time() )[0]['kind'], $url );
			$this->assertSame( 'all', Event_Builder::build( ( new Invalidation() )->prefixes( array( $url ) ), 'example.com', new Key_Scheme( 'ns' ), time() )[0]['kind'], $url );
		}
		$other = Event_Builder::build( ( new Invalidation() )->tags( array( 'ns-p-1' ) )->urls( array( 'http://other.test/a/', 'ftp://example.com/a/' ) ), 'example.com', new Key_Scheme( 'ns' ), time() );
		$this->assertSame( array( 'tags' ), array_column( $other, 'kind' ), 'URLs of other hosts and schemes are not this site\'s pages: dropped' );
	}

	/** An http link on an https site is refreshed as https: one scheme per event, as the purger wants. */
	public function test_refresh_urls_share_the_first_ones_scheme(): void {
		$inv    = ( new Invalidation() )->tags( array( 'ns-menus' ), true )->refresh( array( 'https://example.com/', 'http://example.com/about/', 'https://example.com/about/' ) );
		$events = Event_Builder::build( $inv, 'example.com', new Key_Scheme( 'ns' ), time() );
		$this->assertSame( array( 'https://example.com/', 'https://example.com/about/' ), $events[0]['refresh'] );
	}

	/** PHP's error log, sent to a file of the test for its duration. */
	private function capture_log(): string {
		$file = (string) tempnam( sys_get_temp_dir(), 've-log' );
		$this->previous_log = (string) ini_set( 'error_log', $file );
		return $file;
	}

	private function read_log( string $file ): string {
		ini_set( 'error_log', $this->previous_log );
		$lines = (string) file_get_contents( $file );
		unlink( $file );
		return $lines;
	}

	/** @var string */
	private $previous_log = '';
}
