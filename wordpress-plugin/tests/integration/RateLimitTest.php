<?php
use VarnishEdge\Plugin;
use VarnishEdge\Rate_Limit;

/**
 * Cheap wide triggers are rate-limited. An auto-approved anonymous comment's purge of the post
 * and of every page showing recent comments goes out at most once per window per key; later ones
 * in the window are held and sent once when it ends. Nothing is dropped.
 */
class RateLimitTest extends VE_TestCase {

	protected function setUp(): void {
		parent::setUp();
		Plugin::instance()->rate_limit->reset();
		wp_set_current_user( 0 ); // An anonymous visitor.
	}

	protected function tearDown(): void {
		Plugin::instance()->rate_limit->reset();
		wp_set_current_user( 1 );
		parent::tearDown();
	}

	private function comment( int $post_id ): int {
		return wp_insert_comment( array( 'comment_post_ID' => $post_id, 'comment_content' => 'Nice ' . wp_generate_password( 6, false ), 'comment_author' => 'Visitor', 'comment_approved' => 1 ) );
	}

	public function test_anonymous_comments_in_one_window_purge_the_wide_key_once_then_once_more_at_its_end(): void {
		$a = self::$ids['alpha'];
		$b = self::$ids['bravo'];
		$this->comment( $a );
		$this->end_request();
		$this->assertContains( $this->key( 'comments' ), $this->sent_tags( true ), 'the first comment: at once' );
		$this->assertContains( $this->key( "c-$a" ), $this->sent_tags( true ) );

		for ( $i = 0; $i < 5; $i++ ) {
			Environment::clear_webhooks();
			$this->comment( $b );
			$this->end_request();
			$this->assertNotContains( $this->key( 'comments' ), $this->sent_tags(), 'held while the window lasts' );
		}
		$this->assertTrue( Plugin::instance()->rate_limit->has_due( time() + Rate_Limit::WINDOW + 1 ) );
		$this->assertNotFalse( wp_next_scheduled( Rate_Limit::CRON_HOOK ), 'a WP-Cron run releases them even without traffic' );

		// The window ends: the first request after it (or the cron run) sends what was held, once.
		Environment::clear_webhooks();
		Plugin::instance()->rate_limit->release( time() + Rate_Limit::WINDOW + 1 );
		$this->end_request();
		$this->assertCount( 1, Environment::webhooks() );
		$this->assertContains( $this->key( 'comments' ), $this->sent_tags( true ) );
		$this->assertContains( $this->key( "c-$b" ), $this->sent_tags( true ) );
		$this->assertStringContainsString( 'rate-limited', Environment::accepted_events()[0]['reason'] );

		Environment::clear_webhooks();
		Plugin::instance()->rate_limit->release( time() + Rate_Limit::WINDOW + 2 );
		$this->end_request();
		$this->assertSame( array(), Environment::webhooks(), 'released once' );
		foreach ( get_comments( array( 'post__in' => array( $a, $b ), 'author_email' => '' ) ) as $comment ) {
			if ( 'Visitor' === $comment->comment_author ) {
				wp_delete_comment( $comment, true );
			}
		}
		$this->end_request();
	}

	public function test_moderators_comments_are_not_held(): void {
		wp_set_current_user( 1 );
		$a = self::$ids['alpha'];
		$first  = $this->comment( $a );
		$this->end_request();
		Environment::clear_webhooks();
		$second = $this->comment( $a );
		$this->end_request();
		$this->assertContains( $this->key( 'comments' ), $this->sent_tags( true ) );
		wp_delete_comment( $first, true );
		wp_delete_comment( $second, true );
		$this->end_request();
	}
}
