<?php
use VarnishEdge\CLI_Command;
use VarnishEdge\Plugin;

class VE_CliError extends Exception {
}

/**
 * The WP-CLI command class through its public methods (wp-cli itself is not installed here).
 */
class CliCommandTest extends VE_TestCase {

	private $lines = array();

	private $questions = array();

	private function cli( $answer = false ) {
		$this->lines     = array();
		$this->questions = array();
		return new CLI_Command(
			function ( $level, $message ) {
				if ( 'error' === $level ) {
					throw new VE_CliError( $message );
				}
				$this->lines[] = "$level: $message";
			},
			function ( $question, $assoc_args ) use ( $answer ) {
				// WP_CLI::confirm(): returns on yes (or --yes), exits on anything else.
				$this->questions[] = $question;
				if ( ! $answer && empty( $assoc_args['yes'] ) ) {
					throw new VE_CliError( 'declined' );
				}
			}
		);
	}

	/** `purge all` asks before purging the whole site, unless --yes. */
	public function test_purge_all_asks_for_confirmation_unless_yes() {
		try {
			$this->cli( false )->purge( array( 'all' ) );
			$this->fail( 'purge all must ask first' );
		} catch ( VE_CliError $e ) {
			$this->assertSame( 'declined', $e->getMessage() );
		}
		$this->assertCount( 1, $this->questions );
		$this->assertStringContainsString( 'Purge every cached page', $this->questions[0] );
		$this->end_request();
		$this->assertSame( array(), Environment::webhooks(), 'declined: nothing sent' );

		$this->cli( true )->purge( array( 'all' ) );
		$this->assertTrue( $this->sent_all() );

		Environment::clear_webhooks();
		$this->cli( false )->purge( array( 'all' ), array( 'yes' => true ) );
		$this->assertSame( array(), $this->questions, '--yes does not ask' );
		$this->assertTrue( $this->sent_all() );

		Environment::clear_webhooks();
		$this->cli( false )->purge( array( 'url', home_url( '/about/' ) ) );
		$this->assertSame( array(), $this->questions, 'narrow purges do not ask' );
	}

	public function test_purge_all_url_post_key() {
		$this->cli()->purge( array( 'all' ), array( 'yes' => true ) );
		$this->assertTrue( $this->sent_all() );
		$this->assertStringStartsWith( 'success:', $this->lines[0] );

		Environment::clear_webhooks();
		$this->cli()->purge( array( 'url', home_url( '/about/' ) ) );
		$this->assertSame( array( home_url( '/about/' ) ), $this->sent_urls() );

		Environment::clear_webhooks();
		$this->cli()->purge( array( 'post', (string) self::$ids['bravo'] ) );
		$this->assertContains( $this->key( 'p-' . self::$ids['bravo'] ), $this->sent_tags( false ) );
		$this->assertContains( $this->key( 'pl-' . self::$ids['bravo'] ), $this->sent_tags( false ) );

		Environment::clear_webhooks();
		$this->cli()->purge( array( 'key', 'home', $this->key( 'pl-3' ) ) );
		$this->assertEqualsCanonicalizing( array( $this->key( 'home' ), $this->key( 'pl-3' ), $this->key( 'pl-many' ) ), $this->sent_tags( false ) );
	}

	public function test_bad_input_gets_a_clear_error() {
		foreach ( array(
			array( array( 'url', 'http://elsewhere.test/' ), 'Only absolute URLs of this site' ),
			// The site's host, outside the protocol's URL grammar: said, not a whole-site purge.
			array( array( 'url', (string) preg_replace( '~^(https?://)~', '$1editor:hunter2@', home_url( '/about/' ) ) ), 'cannot be purged: has credentials' ),
			array( array( 'post', '999999' ), 'There is no post with ID 999999' ),
			array( array( 'key', 'bad key!' ), 'Invalid surrogate key' ),
			array( array( 'everything' ), 'Usage' ),
		) as list( $args, $message ) ) {
			try {
				$this->cli()->purge( $args );
				$this->fail( 'expected an error for ' . implode( ' ', $args ) );
			} catch ( VE_CliError $e ) {
				$this->assertStringContainsString( $message, $e->getMessage() );
			}
		}
		$this->assertSame( array(), Environment::webhooks() );
	}

	public function test_explain_lists_keys_and_urls() {
		$id = self::$ids['bravo'];
		$this->cli()->explain( array( (string) $id ) );
		$out = implode( "\n", $this->lines );
		$this->assertStringContainsString( 'Content update:', $out );
		$this->assertStringContainsString( 'key (hard)  ' . $this->key( "p-$id" ), $out );
		$this->assertStringContainsString( 'key (soft)  ' . $this->key( "pl-$id" ), $out );
		$this->assertStringContainsString( 'url (hard)  ' . get_permalink( $id ), $out );
		$this->assertStringContainsString( 'Unpublish, trash or delete:', $out );
		$this->assertStringContainsString( $this->key( 'tl-' . self::$ids['news'] ), $out );
		$this->assertSame( array(), Environment::webhooks(), 'explain sends nothing' );
	}

	public function test_outbox_status_and_flush() {
		Environment::stop_receiver();
		try {
			$this->cli()->purge( array( 'all' ), array( 'yes' => true ) );
			$this->fail( 'delivery to a dead purger is reported' );
		} catch ( VE_CliError $e ) {
			$this->assertStringContainsString( 'Queued in the outbox', $e->getMessage() );
		}
		$this->cli()->outbox( array( 'status' ) );
		$this->assertContains( 'line: Pending batches: 1', $this->lines );
		Environment::start_receiver();
		$this->cli()->outbox( array( 'flush' ) );
		$this->assertStringContainsString( 'Delivered 1 webhooks (1 events); 0 batches pending.', $this->lines[0] );
		$this->assertTrue( $this->sent_all() );
	}

	/** A refusal is reported, shown by status, and `outbox flush` sends refused batches again. */
	public function test_refused_batches_are_reported_and_flush_retries_them() {
		Environment::receiver_status( 403 );
		try {
			$this->cli()->purge( array( 'key', 'refused-1' ) );
			$this->fail( 'a refusal is an error' );
		} catch ( VE_CliError $e ) {
			$this->assertStringContainsString( 'refused the purge and it will not be retried', $e->getMessage() );
			$this->assertStringContainsString( 'HTTP 403', $e->getMessage() );
		}
		$this->assertCount( 2, Environment::webhooks(), 'the batch and its full-purge fallback, once each' );
		$this->cli()->outbox( array( 'status' ) );
		$this->assertContains( 'line: Pending batches: 0', $this->lines );
		$this->assertMatchesRegularExpression( '/^line: Refused by the purger \(not retried until outbox flush\): 2, latest: .*HTTP 403/', $this->lines[4] );

		try {
			$this->cli()->outbox( array( 'flush' ) );
			$this->fail( 'still refused' );
		} catch ( VE_CliError $e ) {
			$this->assertStringContainsString( 'refused 2 batches again', $e->getMessage() );
		}
		$this->assertCount( 4, Environment::webhooks(), 'each sent once more, no new fallback' );

		Environment::receiver_status( 0 );
		$this->cli()->outbox( array( 'flush' ) );
		$this->assertStringStartsWith( 'success: Delivered 2 webhooks', $this->lines[0] );
		$this->assertContains( $this->key( 'refused-1' ), $this->sent_tags() );
		$this->assertTrue( $this->sent_all() );
		$this->assertSame( 0, Plugin::instance()->outbox->stats()['dead'] );
	}
}
