<?php
use VarnishEdge\Webhook_Signer;

/**
 * The shared Standard Webhooks vectors (testdata/webhook-signature-vectors.json), the same file
 * the purger's tests use. The plugin only signs (the purger verifies), so each vector checks that
 * the signer reproduces a listed signature exactly when the vector is valid.
 */
class SignerTest extends \PHPUnit\Framework\TestCase {

	public static function vectors() {
		$file = dirname( __DIR__, 3 ) . '/testdata/webhook-signature-vectors.json';
		$data = json_decode( file_get_contents( $file ), true );
		$out  = array();
		foreach ( $data['vectors'] as $v ) {
			$out[ $v['name'] ] = array( $v );
		}
		return $out;
	}

	/**
	 * The attribute for PHPUnit 10+ (Debian 13's 11 deprecates doc-comment metadata), the
	 * annotation for Debian 12's PHPUnit 9, which ignores attributes.
	 *
	 * @dataProvider vectors
	 */
	#[\PHPUnit\Framework\Attributes\DataProvider( 'vectors' )]
	public function test_valid_vectors_are_reproduced_by_the_signer( array $v ) {
		$ours = array();
		foreach ( $v['secrets'] as $secret ) {
			$ours[] = Webhook_Signer::sign( $v['id'], $v['timestamp'], $v['body'], $secret );
		}
		$theirs = preg_split( '/\s+/', $v['signature'] );
		if ( $v['valid'] ) {
			$this->assertNotEmpty( array_intersect( $ours, $theirs ), 'one of our signatures equals a listed one' );
		} else {
			$this->assertEmpty( array_intersect( $ours, $theirs ), 'an invalid vector must not match our signature' );
		}
	}

	public function test_headers_sign_with_the_first_secret() {
		$a = 'whsec_cHVyZ2VyLXRlc3Qtc2VjcmV0LUEtMDEyMzQ1Njc4OWFi';
		$b = 'whsec_cHVyZ2VyLXRlc3Qtc2VjcmV0LUItcm90YXRlZC05ODc2';
		$h = Webhook_Signer::headers( 'msg_x', 1795300000, 'body', array( $a, $b ) );
		$this->assertSame( Webhook_Signer::sign( 'msg_x', '1795300000', 'body', $a ), $h['webhook-signature'] );
		$this->assertSame( '1795300000', $h['webhook-timestamp'] );
		$this->assertSame( 'application/json', $h['Content-Type'] );
	}

	public function test_malformed_secrets_are_rejected() {
		$this->assertNull( Webhook_Signer::secret_key( 'not-a-secret' ) );
		$this->assertNull( Webhook_Signer::secret_key( 'whsec_!!!' ) );
		$this->assertNull( Webhook_Signer::secret_key( 'whsec_c2hvcnQ=' ) ); // "short": under 16 bytes.
		$this->expectException( InvalidArgumentException::class );
		Webhook_Signer::sign( 'a', '1', 'b', 'whsec_' );
	}
}
