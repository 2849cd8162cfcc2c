<?php
/**
 * A removal is hard-purged everywhere it appears (a soft purge would serve the
 * removed text once more, and for hours while the origin is sick).
 */
class RedactionTest extends VE_TestCase {

	public function test_removed_text_hard_purges_listings_feeds_and_search() {
		$id = $this->new_post( array( 'post_content' => 'Public part. Secret phone number 555-0100.', 'post_category' => array( self::$ids['news'] ) ) );
		wp_update_post( array( 'ID' => $id, 'post_content' => 'Public part.' ) );
		$this->end_request();
		$hard = $this->sent_tags( false );
		foreach ( array( "p-$id", "pl-$id", "pf-$id", 'search' ) as $suffix ) {
			$this->assertContains( $this->key( $suffix ), $hard, "$suffix must be hard" );
		}
		$this->assertStringContainsString( 'content removed', Environment::accepted_events()[0]['reason'] );
		wp_delete_post( $id, true );
		$this->end_request();
	}

	public function test_removed_title_words_hard_purge_title_links() {
		$id = $this->new_post( array( 'post_title' => 'Mayor resigns over scandal' ) );
		wp_update_post( array( 'ID' => $id, 'post_title' => 'Mayor resigns' ) );
		$this->end_request();
		$hard = $this->sent_tags( false );
		$this->assertContains( $this->key( "pl-$id" ), $hard );
		$this->assertContains( $this->key( "pn-$id" ), $hard );
		wp_delete_post( $id, true );
		$this->end_request();
	}

	public function test_password_protecting_a_post_is_a_removal() {
		$id = $this->new_post();
		wp_update_post( array( 'ID' => $id, 'post_password' => 'hush' ) );
		$this->end_request();
		$this->assertContains( $this->key( "pl-$id" ), $this->sent_tags( false ) );
		wp_delete_post( $id, true );
		$this->end_request();
	}

	public function test_pure_addition_keeps_soft_listing_purges() {
		$id = $this->new_post( array( 'post_content' => 'First paragraph.' ) );
		wp_update_post( array( 'ID' => $id, 'post_content' => "First paragraph.\n\nAn update: second paragraph." ) );
		$this->end_request();
		$this->assertContains( $this->key( "p-$id" ), $this->sent_tags( false ), 'own page: always hard' );
		$this->assertContains( $this->key( "pl-$id" ), $this->sent_tags( true ), 'listings: soft, nothing was removed' );
		$this->assertNotContains( $this->key( "pl-$id" ), $this->sent_tags( false ) );
		wp_delete_post( $id, true );
		$this->end_request();
	}

	public function test_leaving_a_category_hard_purges_that_archive() {
		$id = $this->new_post( array( 'post_category' => array( self::$ids['news'] ) ) );
		wp_set_post_categories( $id, array( self::$ids['sports'] ) );
		$this->end_request();
		$this->assertContains( $this->key( 'tl-' . self::$ids['news'] ), $this->sent_tags( false ) );
		$this->assertContains( $this->key( 'tl-' . self::$ids['sports'] ), $this->sent_tags( true ) );
		wp_delete_post( $id, true );
		$this->end_request();
	}
}
